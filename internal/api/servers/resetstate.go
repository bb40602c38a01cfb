package servers

import (
	"encoding/json"
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
)

// resetState is an admin's {"os-resetState": {"state": "error"|"active"}}.
// Like every action it records desired state (an OpReset) and the
// reconciler carries it out: to error keeps the node (the server is
// HeldInError until deleted, rebuilt or reset to active), to active puts
// the server where Ironic shows its node. Refused (409) while a task is in
// progress, and to active for a server that no longer holds a node: there
// is no stuck task to clear, every one has a deadline (docs/DESIGN.md §2.9).
func (s *Service) resetState(w http.ResponseWriter, r *core.Request, raw json.RawMessage) error {
	var body map[string]json.RawMessage
	if json.Unmarshal(raw, &body) != nil || body == nil {
		return core.BadRequest("Invalid input for field/attribute os-resetState. Value: %s. It is not of type 'object'.", raw)
	}
	for k := range body {
		if k != "state" {
			return core.BadRequest("Invalid input for field/attribute os-resetState. Additional properties are not allowed ('%s' was unexpected).", k)
		}
	}
	st, ok := body["state"]
	if !ok {
		return core.BadRequest("Invalid input for field/attribute os-resetState. 'state' is a required property.")
	}
	var to string
	if json.Unmarshal(st, &to) != nil || (to != lifecycle.ResetError && to != lifecycle.ResetActive) {
		return core.BadRequest("Invalid input for field/attribute state. Value: %s. %s is not one of ['active', 'error']", st, st)
	}
	return s.startOp(w, r, policy.ResetState, opRequest{kind: lifecycle.OpReset, resetTo: to})
}
