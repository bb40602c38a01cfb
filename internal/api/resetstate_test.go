package api_test

import (
	"net/http"
	"testing"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

func TestResetState(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("vm1")
	for _, bad := range []string{`{"os-resetState": {}}`, `{"os-resetState": {"state": "deleted"}}`,
		`{"os-resetState": {"state": "error", "x": 1}}`, `{"os-resetState": "error"}`, `{"os-resetState": {"state": 1}}`} {
		f.action(otherAdmin, id, "2.90", bad).novaError(t, 400, "badRequest")
	}
	f.action(member, id, "2.90", `{"os-resetState": {"state": "error"}}`).novaError(t, 403, "forbidden")
	f.action(stranger, id, "2.90", `{"os-resetState": {"state": "error"}}`).novaError(t, 404, "itemNotFound")
	f.action(otherAdmin, unknownID, "2.90", `{"os-resetState": {"state": "error"}}`).novaError(t, 404, "itemNotFound")
	if s := f.server(id); s.OpGen != 0 {
		t.Fatalf("a refused reset recorded an operation: %+v", s.Op)
	}

	f.action(otherAdmin, id, "2.90", `{"os-resetState": {"state": "error"}}`).want(t, http.StatusAccepted)
	s := f.server(id)
	if s.Op.Kind != lifecycle.OpReset || s.Op.ResetTo != lifecycle.ResetError || s.OpGen != 1 {
		t.Fatalf("recorded %+v gen %d", s.Op, s.OpGen)
	}
	// Nova's reset is synchronous: the state shows at once.
	if show := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.90", nil).want(t, 200).body, "server"); show["status"] != "ERROR" {
		t.Errorf("after reset to error: %v", show["status"])
	}
	// Listed as it shows, before the reconciler carried the reset out.
	if got := list(t, f.do("GET", "/v2.1/servers?status=ERROR", "2.90", nil).want(t, 200).body, "servers"); len(got) != 1 || got[0].(map[string]any)["id"] != id {
		t.Errorf("status=ERROR lists %v, want the reset server", got)
	}
	if got := list(t, f.do("GET", "/v2.1/servers?status=ACTIVE", "2.90", nil).want(t, 200).body, "servers"); len(got) != 0 {
		t.Errorf("status=ACTIVE lists %v, want none", got)
	}
	// A second reset before the first is carried out replaces it (Tempest's
	// test_reset_state_server resets to error and straight back to active).
	f.action(otherAdmin, id, "2.90", `{"os-resetState": {"state": "active"}}`).want(t, http.StatusAccepted)
	if s := f.server(id); s.Op.ResetTo != lifecycle.ResetActive || s.OpGen != 2 {
		t.Fatalf("second reset recorded %+v gen %d", s.Op, s.OpGen)
	}
	if show := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.90", nil).want(t, 200).body, "server"); show["status"] != "ACTIVE" {
		t.Errorf("after reset to error and back to active: %v", show["status"])
	}
	// Any other pending operation still refuses a reset.
	f.finishOp(id, lifecycle.PhaseActive)
	f.action(member, id, "2.90", `{"os-stop": null}`).want(t, http.StatusAccepted)
	wantMsg(t, f.action(otherAdmin, id, "2.90", `{"os-resetState": {"state": "error"}}`), 409, "conflictingRequest", "Cannot 'resetState'")
	f.finishOp(id, lifecycle.PhaseStopped)
	f.action(otherAdmin, id, "2.90", `{"os-resetState": {"state": "error"}}`).want(t, http.StatusAccepted)

	// The reconciler's part: ERROR, the node kept.
	f.advance(id, func(s *lifecycle.Server) {
		s.Phase, s.OpDone = lifecycle.PhaseError, s.OpGen
		s.Fault = &lifecycle.Fault{Reason: lifecycle.ReasonResetState, Message: "reset", Step: lifecycle.StepReset, Node: s.NodeID}
	})
	// Nova rebuilds an ERROR server; here one that still holds its node.
	f.action(member, id, "2.90", map[string]any{"rebuild": map[string]any{"imageRef": imageID}}).want(t, http.StatusAccepted)
	if show := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.90", nil).want(t, 200).body, "server"); show["status"] != "REBUILD" {
		t.Errorf("rebuild of a server reset to error shows %v", show["status"])
	}
	f.finishOp(id, lifecycle.PhaseError)
	f.action(otherAdmin, id, "2.90", `{"os-resetState": {"state": "active"}}`).want(t, http.StatusAccepted)
	if show := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.90", nil).want(t, 200).body, "server"); show["status"] != "ACTIVE" {
		t.Errorf("after reset to active: %v", show["status"])
	}

	// A failed build released its node: ACTIVE would be a lie.
	failed := f.create("failed")
	f.advance(failed, func(s *lifecycle.Server) {
		s.Phase = lifecycle.PhaseError
		s.Fault = &lifecycle.Fault{Reason: lifecycle.ReasonDeployFailed, Message: "deploy failed", Step: lifecycle.StepDeploy}
	})
	wantMsg(t, f.action(otherAdmin, failed, "2.90", `{"os-resetState": {"state": "active"}}`), 409, "conflictingRequest", "vm_state error")
	wantMsg(t, f.action(member, failed, "2.90", map[string]any{"rebuild": map[string]any{"imageRef": imageID}}), 409, "conflictingRequest", "vm_state error")
	f.action(otherAdmin, failed, "2.90", `{"os-resetState": {"state": "error"}}`).want(t, http.StatusAccepted)
	// A build in progress has a deadline: nothing to reset.
	building := f.create("building")
	wantMsg(t, f.action(otherAdmin, building, "2.90", `{"os-resetState": {"state": "error"}}`), 409, "conflictingRequest", "task_state")
}
