package api

import (
	"encoding/json"
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
)

// adopt answers POST /ingot/v1/adopt: {"from": "ironic" or "nova",
// "dry_run": bool, "nova_stopped": bool, "project": …, "flavor": …} runs
// what `ingot adopt --from-ironic` (or --from-nova) runs and answers its report (200; nothing written with
// dry_run).
func (s *Service) adopt(w http.ResponseWriter, r *core.Request) error {
	if s.Cfg.Adopt == nil {
		return &core.APIError{Status: http.StatusNotImplemented, Message: "Adoption is not available in this ingot."}
	}
	obj, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	var req core.AdoptRequest
	for k := range obj {
		switch k {
		case "from", "dry_run", "nova_stopped", "project", "flavor":
		default:
			return core.BadRequest("Unknown member %q: from, dry_run, nova_stopped, project and flavor are allowed.", k)
		}
	}
	raw, _ := json.Marshal(obj)
	if err := json.Unmarshal(raw, &req); err != nil {
		return core.BadRequest("Malformed request body: %v", err)
	}
	if req.From != "ironic" && req.From != "nova" {
		return core.BadRequest("from must be \"ironic\" or \"nova\".")
	}
	rep, err := s.Cfg.Adopt(r.Context(), req)
	if err != nil {
		return core.Unavailable("Adoption stopped: %v", err)
	}
	core.WriteJSON(w, http.StatusOK, rep)
	return nil
}
