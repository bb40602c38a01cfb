package api

func (s *server) serverGroupRoutes() {}
