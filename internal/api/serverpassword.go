package api

import (
	"net/http"

	"github.com/ingot-dev/ingot/internal/policy"
)

// os-server-password is where Nova keeps the password a guest posted,
// encrypted, to the metadata service. ingot runs no metadata service (the
// config drive only), so no guest ever posts one: the password is always
// the empty string, as in Nova before a guest sets it, and clearing it is
// a no-op.

func (s *server) serverPasswordRoutes() {
	s.compute("GET /v2.1/servers/{id}/os-server-password", s.showServerPassword)
	s.compute("DELETE /v2.1/servers/{id}/os-server-password", s.clearServerPassword)
}

func (s *server) showServerPassword(w http.ResponseWriter, r *request) error {
	if _, err := s.visibleServer(r, r.PathValue("id"), policy.ServerPasswordShow); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"password": ""})
	return nil
}

func (s *server) clearServerPassword(w http.ResponseWriter, r *request) error {
	if _, err := s.visibleServer(r, r.PathValue("id"), policy.ServerPasswordClear); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
