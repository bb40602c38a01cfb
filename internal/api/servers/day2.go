package servers

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// The server actions (POST /servers/{id}/action) in Nova's shapes. Each is
// a desired-state change (docs/DESIGN.md §2.9): checked against the
// server's lock and state (lifecycle.Allowed: Nova's check_instance_state
// and its 409), then recorded with its instance action in one transaction
// (store.UpdateServer, whose mutate checks both again on the fresh row, so
// of two racing requests one is refused), then the reconciler is kicked.
// Nothing here calls Ironic to act; rescue reads the node's rescue
// interface to refuse what Ironic cannot do.

// actionFunc answers one action with its body member.
type actionFunc func(s *Service, w http.ResponseWriter, r *core.Request, raw json.RawMessage) error

var serverActions = map[string]actionFunc{
	"forceDelete":   (*Service).forceDelete,
	"reboot":        (*Service).reboot,
	"os-stop":       powerAction(lifecycle.OpStop, policy.ServersStop),
	"os-start":      powerAction(lifecycle.OpStart, policy.ServersStart),
	"rebuild":       (*Service).rebuild,
	"rescue":        (*Service).rescue,
	"unrescue":      (*Service).unrescue,
	"lock":          (*Service).lock,
	"unlock":        (*Service).unlock,
	"os-resetState": (*Service).resetState,
	"restore":       (*Service).restore,
	// With Neutron (secgroups.go); otherwise answered as unserved.
	"addSecurityGroup":    securityGroupAction(true),
	"removeSecurityGroup": securityGroupAction(false),
}

// ServerAction answers POST /servers/{id}/action: exactly one action
// member; an action ingot does not serve (resize, createImage, …) is
// answered as Nova in front of Ironic does (unserved.go).
func (s *Service) ServerAction(w http.ResponseWriter, r *core.Request) error {
	body, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	if len(body) != 1 {
		return core.BadRequest("The request body must name exactly one server action.")
	}
	for name, raw := range body {
		act, ok := serverActions[name]
		if !ok {
			return s.unservedAction(r, name, raw) // unserved.go
		}
		return act(s, w, r, raw)
	}
	return nil
}

// lockConflict is Nova's check_instance_lock: a locked server refuses
// actions and deletes from anyone but an admin.
func lockConflict(sv *lifecycle.Server, admin bool) error {
	if sv.Lock.Locked && !admin {
		return core.Conflict("Instance %s is locked", sv.ID)
	}
	return nil
}

// opRequest is an operation to record.
type opRequest struct {
	kind lifecycle.OpKind
	hard bool
	// password is the rescue password.
	password string
	// resetTo is the state an os-resetState sets.
	resetTo string
	// volumeID is the volume an attach or detach is of.
	volumeID string
	// change, if set, makes the request's other changes on the fresh
	// record (a rebuild's Spec and name).
	change func(*lifecycle.Server)
	// network is an interface attach's or detach's network; fixedIP
	// and userPort what an attach asks for there; port the id of the
	// attach's port row, or the row a detach frees.
	network, fixedIP, userPort, port string
}

// checkOp is what a request must pass on the server, before and again
// inside the write: visible, not locked (unless admin), allowed in its state.
func checkOp(sv *lifecycle.Server, op opRequest, admin bool) error {
	if !lifecycle.Nova(sv).Visible {
		return core.NotFound("Instance %s could not be found.", sv.ID)
	}
	if err := lockConflict(sv, admin); err != nil {
		return err
	}
	c := lifecycle.Allowed(sv, op.kind, op.hard)
	if op.kind == lifecycle.OpReset {
		c = lifecycle.AllowedReset(sv, op.resetTo)
	}
	if c != nil {
		return core.Conflict("%s", c.Message(sv.ID))
	}
	return nil
}

// recordOp writes the operation (Op with a new OpGen) and its instance
// action in one transaction, re-checking the fresh record, then kicks the
// reconciler. It returns the record as written.
func (s *Service) recordOp(r *core.Request, sv *lifecycle.Server, op opRequest) (*lifecycle.Server, error) {
	now := s.Cfg.Clock.Now().UTC()
	admin := r.IsAdmin()
	act := &store.ActionRecord{RequestID: r.ID, Action: string(op.kind), StartTime: now,
		ProjectID: r.Ident.ProjectID, UserID: r.Ident.UserID}
	out, err := s.Cfg.Store.UpdateServer(r.Context(), sv.ID, act, func(cur *lifecycle.Server) error {
		if err := checkOp(cur, op, admin); err != nil {
			return err
		}
		if op.change != nil {
			op.change(cur)
		}
		cur.Op = lifecycle.Op{Kind: op.kind, Hard: op.hard, RequestID: r.ID, At: now, RescuePassword: op.password, ResetTo: op.resetTo,
			Network: op.network, FixedIP: op.fixedIP, UserPort: op.userPort, Port: op.port, VolumeID: op.volumeID}
		cur.OpGen++
		cur.UpdatedAt = now
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, core.NotFound("Instance %s could not be found.", sv.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("%s server %s: %w", op.kind, sv.ID, err)
	}
	s.Cfg.Kick(sv.ID)
	return out, nil
}

// startOp is the common path of an operation: the server and its rule,
// the checks, the record, 202.
func (s *Service) startOp(w http.ResponseWriter, r *core.Request, rule string, op opRequest) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), rule)
	if err != nil {
		return err
	}
	return s.acceptOp(w, r, sv, op)
}

// acceptOp checks op on sv, records it and answers 202.
func (s *Service) acceptOp(w http.ResponseWriter, r *core.Request, sv *lifecycle.Server, op opRequest) error {
	if err := checkOp(sv, op, r.IsAdmin()); err != nil {
		return err
	}
	if _, err := s.recordOp(r, sv, op); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// reboot is {"reboot": {"type": "SOFT"|"HARD"}} (any case, as Nova's enum).
func (s *Service) reboot(w http.ResponseWriter, r *core.Request, raw json.RawMessage) error {
	var body map[string]json.RawMessage
	if json.Unmarshal(raw, &body) != nil || body == nil {
		return core.BadRequest("Invalid input for field/attribute reboot. Value: %s. It is not of type 'object'.", raw)
	}
	for k := range body {
		if k != "type" {
			return core.BadRequest("Invalid input for field/attribute reboot. Additional properties are not allowed ('%s' was unexpected).", k)
		}
	}
	if _, ok := body["type"]; !ok {
		return core.BadRequest("Invalid input for field/attribute reboot. 'type' is a required property.")
	}
	var typ string
	_ = json.Unmarshal(body["type"], &typ)
	var hard bool
	switch typ {
	case "HARD", "Hard", "hard":
		hard = true
	case "SOFT", "Soft", "soft":
	default:
		return core.BadRequest("Invalid input for field/attribute type. Value: %s. It is not one of ['HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft'].", body["type"])
	}
	return s.startOp(w, r, policy.ServersReboot, opRequest{kind: lifecycle.OpReboot, hard: hard})
}

// powerAction is os-stop or os-start; their member's value is not read
// (Nova's schema accepts anything there).
func powerAction(k lifecycle.OpKind, rule string) actionFunc {
	return func(s *Service, w http.ResponseWriter, r *core.Request, _ json.RawMessage) error {
		return s.startOp(w, r, rule, opRequest{kind: k})
	}
}

// forceDelete (what Terraform's force_delete sends) is a delete; a locked
// server refuses it as it refuses the delete.
func (s *Service) forceDelete(w http.ResponseWriter, r *core.Request, _ json.RawMessage) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServersForceDelete)
	if err != nil {
		return err
	}
	if err := lockConflict(sv, r.IsAdmin()); err != nil {
		return err
	}
	if err := s.Cfg.Store.RequestDelete(r.Context(), sv.ID, r.ID, s.Cfg.Clock.Now().UTC()); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return core.NotFound("Instance %s could not be found.", sv.ID)
		}
		return fmt.Errorf("force delete server %s: %w", sv.ID, err)
	}
	s.Cfg.Kick(sv.ID)
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// rescue is {"rescue": null | {"adminPass": …, "rescue_image_ref": …}}.
// Ironic boots its own rescue ramdisk, so rescue_image_ref is checked and
// not used (as Nova's Ironic driver ignores it). Nova answers 200 with the
// password (unless instance passwords are disabled).
func (s *Service) rescue(w http.ResponseWriter, r *core.Request, raw json.RawMessage) error {
	var password string
	if string(raw) != "null" {
		var body map[string]json.RawMessage
		if json.Unmarshal(raw, &body) != nil || body == nil {
			return core.BadRequest("Invalid input for field/attribute rescue. Value: %s. It is not of type 'object', 'null'.", raw)
		}
		for k := range body {
			switch k {
			case "adminPass", "rescue_image_ref":
			default:
				return core.BadRequest("Invalid input for field/attribute rescue. Additional properties are not allowed ('%s' was unexpected).", k)
			}
		}
		if v, ok := body["adminPass"]; ok && json.Unmarshal(v, &password) != nil {
			return core.BadRequest("Invalid input for field/attribute adminPass. Value: %s. It is not of type 'string'.", v)
		}
		if v, ok := body["rescue_image_ref"]; ok {
			var ref string
			if json.Unmarshal(v, &ref) != nil || !core.IsUUID(ref) {
				return core.BadRequest("Invalid input for field/attribute rescue_image_ref. Value: %s. It is not a 'uuid'.", v)
			}
		}
	}
	if password == "" {
		password = generatePassword()
	}
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.Rescue)
	if err != nil {
		return err
	}
	op := opRequest{kind: lifecycle.OpRescue, password: password}
	if err := checkOp(sv, op, r.IsAdmin()); err != nil {
		return err
	}
	if sv.Spec.ImageID == "" {
		return core.BadRequest("Instance %s cannot be rescued: Cannot rescue a volume-backed instance", sv.ID)
	}
	if err := s.rescuable(r, sv); err != nil {
		return err
	}
	if _, err := s.recordOp(r, sv, op); err != nil {
		return err
	}
	var body adminPassBody
	if !s.Cfg.DisableInstancePassword {
		body.AdminPass = &password
	}
	core.WriteJSON(w, http.StatusOK, body)
	return nil
}

// rescuable refuses a rescue the node cannot do: Ironic answers 500 to a
// rescue of a no-rescue node (docs/ironic.md §12). When Ironic cannot be
// asked, the rescue is recorded anyway: the reconciler's call then tells.
func (s *Service) rescuable(r *core.Request, sv *lifecycle.Server) error {
	if s.Cfg.RescueInterface == nil || sv.NodeID == "" {
		return nil
	}
	iface, err := s.Cfg.RescueInterface(r.Context(), sv.NodeID)
	if err != nil {
		if !errors.Is(err, ironic.ErrNotFound) {
			s.Log.Warn("api: rescue interface unknown; recording the rescue", "server", sv.ID, "node", sv.NodeID, "err", err)
		}
		return nil
	}
	if iface == "no-rescue" {
		return core.Conflict("Instance %s cannot be rescued: its bare-metal node has no rescue interface (rescue_interface no-rescue).", sv.ID)
	}
	return nil
}

func (s *Service) unrescue(w http.ResponseWriter, r *core.Request, _ json.RawMessage) error {
	return s.startOp(w, r, policy.Unrescue, opRequest{kind: lifecycle.OpUnrescue})
}

// lock is {"lock": null | {"locked_reason": …}} (the reason from 2.73).
// As Nova: an owner locking a locked server changes nothing; an admin of
// another project locks it as admin, which its owner cannot unlock.
func (s *Service) lock(w http.ResponseWriter, r *core.Request, raw json.RawMessage) error {
	reason := ""
	if r.MV.AtLeast(mvLockReason) && string(raw) != "null" {
		var body map[string]json.RawMessage
		if json.Unmarshal(raw, &body) != nil || body == nil {
			return core.BadRequest("Invalid input for field/attribute lock. Value: %s. It is not of type 'object', 'null'.", raw)
		}
		for k := range body {
			if k != "locked_reason" {
				return core.BadRequest("Invalid input for field/attribute lock. Additional properties are not allowed ('%s' was unexpected).", k)
			}
		}
		if v, ok := body["locked_reason"]; ok {
			if json.Unmarshal(v, &reason) != nil || reason == "" || len([]rune(reason)) > 255 {
				return core.BadRequest("Invalid input for field/attribute locked_reason. Value: %s. It must be a string of 1 to 255 characters.", v)
			}
		}
	}
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.Lock)
	if err != nil {
		return err
	}
	owner := sv.ProjectID == r.Ident.ProjectID
	if sv.Lock.Locked && owner {
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	by := "admin"
	if owner {
		by = "owner"
	}
	if err := s.recordLock(r, sv, lifecycle.Lock{Locked: true, By: by, Reason: reason}, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// unlock: the caller must be who locked it (owner or admin), or pass the
// unlock_override rule.
func (s *Service) unlock(w http.ResponseWriter, r *core.Request, _ json.RawMessage) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.Unlock)
	if err != nil {
		return err
	}
	t := core.Target(sv.ProjectID, sv.UserID)
	if !expectedLockedBy(sv, r) {
		if err := r.Authorize(policy.UnlockOverride, t); err != nil {
			return err
		}
	}
	recheck := func(cur *lifecycle.Server) error {
		if !expectedLockedBy(cur, r) && !r.Can(policy.UnlockOverride, t) {
			return core.Forbidden("Policy doesn't allow %s to be performed.", policy.UnlockOverride)
		}
		return nil
	}
	if err := s.recordLock(r, sv, lifecycle.Lock{}, recheck); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// expectedLockedBy is Nova's is_expected_locked_by: the lock, if any, was
// taken by the caller's side (owner for the server's project, else admin).
func expectedLockedBy(sv *lifecycle.Server, r *core.Request) bool {
	want := "admin"
	if sv.ProjectID == r.Ident.ProjectID {
		want = "owner"
	}
	return sv.Lock.By == "" || sv.Lock.By == want
}

// recordLock writes the lock and its instance action (lock or unlock).
func (s *Service) recordLock(r *core.Request, sv *lifecycle.Server, l lifecycle.Lock, check func(*lifecycle.Server) error) error {
	now := s.Cfg.Clock.Now().UTC()
	name := "lock"
	if !l.Locked {
		name = "unlock"
	}
	act := &store.ActionRecord{RequestID: r.ID, Action: name, StartTime: now, ProjectID: r.Ident.ProjectID, UserID: r.Ident.UserID}
	_, err := s.Cfg.Store.UpdateServer(r.Context(), sv.ID, act, func(cur *lifecycle.Server) error {
		if check != nil {
			if err := check(cur); err != nil {
				return err
			}
		}
		cur.Lock = l
		cur.UpdatedAt = now
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return core.NotFound("Instance %s could not be found.", sv.ID)
	}
	if err != nil {
		return fmt.Errorf("%s server %s: %w", name, sv.ID, err)
	}
	return nil
}

// passwordChars leaves out look-alikes (0/O, 1/l/I), as Nova's
// generate_password does.
const passwordChars = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"

// generatePassword is a random 12-character password (Nova's default
// password_length).
func generatePassword() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail (Go 1.24)
	for i := range b {
		b[i] = passwordChars[int(b[i])%len(passwordChars)]
	}
	return string(b)
}

// restore is Nova's restore of a SOFT_DELETED server. ingot deletes at
// once (Nova's reclaim_instance_interval = 0, no soft delete), so no
// server is ever soft-deleted: a visible one is in the wrong state.
func (s *Service) restore(w http.ResponseWriter, r *core.Request, raw json.RawMessage) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServersRestore)
	if err != nil {
		return err
	}
	return core.Conflict("Cannot 'restore' instance %s while it is in vm_state %s", sv.ID, lifecycle.Nova(sv).VMState)
}
