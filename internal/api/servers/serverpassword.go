package servers

import (
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
)

// os-server-password is where Nova keeps the password a guest posted,
// encrypted, to the metadata service. ingot runs no metadata service (the
// config drive only), so no guest ever posts one: the password is always
// the empty string, as in Nova before a guest sets it, and clearing it is
// a no-op.

func (s *Service) PasswordRoutes() {
	s.Compute("GET /v2.1/servers/{id}/os-server-password", s.showServerPassword)
	s.Compute("DELETE /v2.1/servers/{id}/os-server-password", s.clearServerPassword)
}

func (s *Service) showServerPassword(w http.ResponseWriter, r *core.Request) error {
	if _, err := s.visibleServer(r, r.PathValue("id"), policy.ServerPasswordShow); err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, passwordBody{Password: ""})
	return nil
}

func (s *Service) clearServerPassword(w http.ResponseWriter, r *core.Request) error {
	if _, err := s.visibleServer(r, r.PathValue("id"), policy.ServerPasswordClear); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
