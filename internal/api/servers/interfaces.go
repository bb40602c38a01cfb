package servers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// Interface attach and detach (os-interface) as Nova answers them in front
// of Ironic, more than one port on a network included. Each is a day-2 operation (lifecycle/interfaces.go): the
// interface is recorded in the server's Spec with the operation before the
// answer. Nova's attach is synchronous (the API waits for the compute
// service and answers the port), so the attach waits here for the
// reconciler to carry it out, bounded by the operation's deadline; the
// detach answers 202 at once, as Nova's.

// mvInterfaceTag is 2.49: tag on an interface attach; 2.70 shows it
// (mvAttachmentTag).
const mvInterfaceTag = 49

// interfaceRequest is an attach's interfaceAttachment member.
type interfaceRequest struct {
	netID, portID, fixedIP, tag string
}

func (s *Service) InterfaceRoutes() {
	s.Compute("POST /v2.1/servers/{id}/os-interface", s.attachInterface)
	s.Compute("GET /v2.1/servers/{id}/os-interface/{port}", s.showInterface)
	s.Compute("DELETE /v2.1/servers/{id}/os-interface/{port}", s.detachInterface)
}

// readInterfaceRequest reads the body as Nova's schema (create, and
// create_v249 with tag).
func readInterfaceRequest(r *core.Request) (interfaceRequest, error) {
	var out interfaceRequest
	body, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return out, err
	}
	for k := range body {
		if k != "interfaceAttachment" {
			return out, core.BadRequest("Invalid input for field/attribute %s. Additional properties are not allowed ('%s' was unexpected).", k, k)
		}
	}
	raw, ok := body["interfaceAttachment"]
	if !ok {
		return out, nil
	}
	var att map[string]json.RawMessage
	if json.Unmarshal(raw, &att) != nil || att == nil {
		return out, core.BadRequest("Invalid input for field/attribute interfaceAttachment. Value: %s. %s is not of type 'object'", raw, raw)
	}
	for k := range att {
		switch {
		case k == "net_id", k == "port_id", k == "fixed_ips", k == "tag" && r.MV.AtLeast(mvInterfaceTag):
		default:
			return out, core.BadRequest("Invalid input for field/attribute interfaceAttachment. Additional properties are not allowed ('%s' was unexpected)", k)
		}
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"net_id", &out.netID}, {"port_id", &out.portID}} {
		v, err := core.OptionalString(att, f.key, 36)
		if err != nil {
			return out, err
		}
		if v != "" && !core.IsUUID(v) {
			return out, core.BadRequest("Invalid input for field/attribute %s. Value: %s. '%s' is not a 'uuid'", f.key, v, v)
		}
		*f.dst = v
	}
	if out.tag, err = core.OptionalString(att, "tag", 60); err != nil {
		return out, err
	}
	if raw, ok := att["fixed_ips"]; ok {
		var ips []map[string]json.RawMessage
		if json.Unmarshal(raw, &ips) != nil || len(ips) != 1 || ips[0] == nil {
			return out, core.BadRequest("Invalid input for field/attribute fixed_ips. Value: %s. It must be a list of exactly one {\"ip_address\": …}.", raw)
		}
		for k := range ips[0] {
			if k != "ip_address" {
				return out, core.BadRequest("Invalid input for field/attribute fixed_ips. Additional properties are not allowed ('%s' was unexpected)", k)
			}
		}
		if out.fixedIP, err = core.OptionalString(ips[0], "ip_address", 64); err != nil {
			return out, err
		}
		if !validIP(out.fixedIP) {
			return out, core.BadRequest("Invalid input for field/attribute ip_address. Value: %s. '%s' is not a 'ipv4' or 'ipv6'", out.fixedIP, out.fixedIP)
		}
	}
	switch {
	case out.netID != "" && out.portID != "":
		return out, core.BadRequest("Must not input both network_id and port_id")
	case out.fixedIP != "" && out.netID == "":
		return out, core.BadRequest("Must input network_id when request IP address")
	}
	return out, nil
}

// attachInterface is POST /servers/{id}/os-interface.
func (s *Service) attachInterface(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.InterfacesCreate)
	if err != nil {
		return err
	}
	req, err := readInterfaceRequest(r)
	if err != nil {
		return err
	}
	op := opRequest{kind: lifecycle.OpAttachInterface}
	if err := checkOp(sv, op, r.IsAdmin()); err != nil {
		return err
	}
	if req.tag != "" {
		// Nova's Ironic driver cannot tag an attached interface.
		return core.BadRequest("Tagged network interface attachment is not supported for this server instance.")
	}
	netID, err := s.resolveInterface(r.Context(), sv, req)
	if err != nil {
		return err
	}
	// The port's row gets this id: a retry after a crash finds it.
	op.network, op.fixedIP, op.userPort, op.port = netID, req.fixedIP, req.portID, uuid.NewString()
	out, err := s.recordOp(r, sv, op)
	if err != nil {
		return err
	}
	done, err := s.awaitOp(r.Context(), out)
	if err != nil {
		return err
	}
	if done.OpFault != nil || done.Phase == lifecycle.PhaseError || done.Desired == lifecycle.DesiredDeleted {
		return attachFailed(done, netID)
	}
	p, ok, err := s.portByID(r.Context(), done.ID, op.port)
	if err != nil {
		return err
	}
	if !ok {
		return attachFailed(done, netID)
	}
	return s.writeInterface(w, r, done, p)
}

// attachFailed is Nova's answer to an attach that did not happen: its
// InterfaceAttachFailed (500), or NoMoreFixedIps (400) when the network
// had no address left.
func attachFailed(sv *lifecycle.Server, netID string) error {
	if f := sv.OpFault; f != nil && f.Reason == lifecycle.ReasonNetworkAllocationFailed {
		return core.BadRequest("No fixed IP addresses available for network: %s", netID)
	}
	return &core.APIError{Status: http.StatusInternalServerError, Message: fmt.Sprintf("Failed to attach network adapter device to %s", sv.ID)}
}

// resolveInterface checks the interface asked for as Nova's network API
// does, and returns its network.
func (s *Service) resolveInterface(ctx context.Context, sv *lifecycle.Server, req interfaceRequest) (string, error) {
	if s.Cfg.Neutron == nil {
		return s.resolveEmbeddedInterface(sv, req)
	}
	nr := neutronResolver{s.Cfg.Neutron}
	switch {
	case req.portID != "":
		p, err := s.Cfg.Neutron.GetPort(ctx, req.portID)
		if errors.Is(err, neutron.ErrPortNotFound) || errors.Is(err, neutron.ErrNotFound) {
			return "", core.NotFound("Port id %s could not be found.", req.portID)
		}
		if err != nil {
			return "", unavailable(err)
		}
		if p.ProjectID != sv.ProjectID {
			return "", core.BadRequest("Port %s not usable for instance %s.", req.portID, sv.ID)
		}
		if p.DeviceID != "" {
			return "", core.Conflict("Port %s is still in use.", req.portID)
		}
		return p.NetworkID, nil
	case req.netID != "":
		n, err := s.Cfg.Neutron.GetNetwork(ctx, req.netID)
		if errors.Is(err, neutron.ErrNetworkNotFound) || errors.Is(err, neutron.ErrNotFound) || (err == nil && !usableBy(n, sv.ProjectID)) {
			return "", core.NotFound("Network %s could not be found.", req.netID)
		}
		if err != nil {
			return "", unavailable(err)
		}
		if req.fixedIP != "" {
			if err := nr.FixedIP(ctx, n.ID, req.fixedIP); err != nil {
				var ae *core.APIError
				if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
					return "", core.Conflict("Fixed IP %s is already in use.", req.fixedIP)
				}
				return "", err
			}
		}
		return n.ID, nil
	}
	ids, err := nr.Usable(ctx, sv.ProjectID)
	if err != nil {
		return "", err
	}
	return oneNetwork(sv, ids)
}

// oneNetwork is the network an attach that names none takes: the only one
// the project may use (Nova's InterfaceAttachFailedNoNetwork and
// NetworkAmbiguous otherwise).
func oneNetwork(sv *lifecycle.Server, ids []string) (string, error) {
	switch len(ids) {
	case 0:
		return "", core.BadRequest("No specific network was requested and none are available for project '%s'.", sv.ProjectID)
	case 1:
		return ids[0], nil
	}
	return "", core.BadRequest("More than one possible network found. Specify network ID(s) to select which one(s) to connect to.")
}

// resolveEmbeddedInterface resolves against the configured networks: no
// user's ports and no fixed IPs there (as at create).
func (s *Service) resolveEmbeddedInterface(sv *lifecycle.Server, req interfaceRequest) (string, error) {
	switch {
	case req.portID != "":
		return "", core.NotFound("Port id %s could not be found.", req.portID)
	case req.fixedIP != "":
		return "", core.BadRequest("Fixed IP requests are not supported yet: addresses are allocated from the network's range.")
	case req.netID != "":
		n, ok := s.Cfg.Networks.Lookup(req.netID)
		if !ok || !strings.EqualFold(n.ID, req.netID) {
			return "", core.NotFound("Network %s could not be found.", req.netID)
		}
		return n.ID, nil
	}
	ids := make([]string, 0, len(s.Cfg.Networks))
	for _, n := range s.Cfg.Networks {
		ids = append(ids, n.ID)
	}
	return oneNetwork(sv, ids)
}

// awaitPoll is how often the attach looks at the record while it waits.
const awaitPoll = 100 * time.Millisecond

// awaitOp waits until the reconciler carried out (or gave up on) the
// operation recorded in sv, the server was deleted, or the operation's
// deadline (and its roll-back's) passed.
func (s *Service) awaitOp(ctx context.Context, sv *lifecycle.Server) (*lifecycle.Server, error) {
	d := s.Cfg.InterfaceTimeout
	if d <= 0 {
		d = lifecycle.DefaultConfig().InterfaceTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, 2*d+30*time.Second)
	defer cancel()
	t := time.NewTicker(awaitPoll)
	defer t.Stop()
	for {
		cur, err := s.Cfg.Store.GetServer(ctx, sv.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, core.NotFound("Instance %s could not be found.", sv.ID)
		case err != nil && ctx.Err() == nil:
			return nil, fmt.Errorf("await %s of %s: %w", sv.Op.Kind, sv.ID, err)
		case err == nil && (cur.OpDone >= sv.OpGen || cur.Desired == lifecycle.DesiredDeleted):
			return cur, nil
		}
		select {
		case <-ctx.Done():
			return nil, &core.APIError{Status: http.StatusInternalServerError, Message: fmt.Sprintf("Failed to attach network adapter device to %s", sv.ID)}
		case <-t.C:
		}
	}
}

// portByID is the server's port row id.
func (s *Service) portByID(ctx context.Context, serverID, id string) (store.Port, bool, error) {
	return s.findPort(ctx, serverID, func(p store.Port) bool { return p.ID == id })
}

// writeInterface answers one interfaceAttachment: Neutron's port as
// Neutron shows it, or the embedded row.
func (s *Service) writeInterface(w http.ResponseWriter, r *core.Request, sv *lifecycle.Server, p store.Port) error {
	view := embeddedInterface(p)
	if s.Cfg.Neutron != nil {
		np, err := s.Cfg.Neutron.GetPort(r.Context(), p.VIF())
		if errors.Is(err, neutron.ErrPortNotFound) || errors.Is(err, neutron.ErrNotFound) || (err == nil && np.DeviceID != sv.ID) {
			return core.NotFound("Instance %s does not have a port with id %s", sv.ID, p.VIF())
		}
		if err != nil {
			return unavailable(err)
		}
		view = neutronInterface(np)
	}
	core.WriteJSON(w, http.StatusOK, map[string]any{"interfaceAttachment": interfaceShown(r, view)})
	return nil
}

// interfaceShown is the view with tag (null: Nova's Ironic driver tags
// none) from 2.70.
func interfaceShown(r *core.Request, v interfaceAttachment) any {
	if !r.MV.AtLeast(mvAttachmentTag) {
		return v
	}
	return taggedInterface{interfaceAttachment: v}
}

type taggedInterface struct {
	interfaceAttachment
	Tag *string `json:"tag"`
}

// showInterface is GET /servers/{id}/os-interface/{port}.
func (s *Service) showInterface(w http.ResponseWriter, r *core.Request) error {
	sv, id, p, ok, err := s.serverPort(r, policy.InterfacesShow, nil)
	if err != nil {
		return err
	}
	if !ok {
		if s.Cfg.Neutron != nil {
			// Nova asks Neutron: a port of another device is not the server's.
			if _, err := s.Cfg.Neutron.GetPort(r.Context(), id); err != nil && !errors.Is(err, neutron.ErrPortNotFound) && !errors.Is(err, neutron.ErrNotFound) {
				return unavailable(err)
			} else if err == nil {
				return core.NotFound("Instance %s does not have a port with id %s", sv.ID, id)
			}
		}
		return core.NotFound("Port id %s could not be found.", id)
	}
	return s.writeInterface(w, r, sv, p)
}

// serverPort is the visible server of the path (passing check, when
// set) and its port the path names by the id Ironic and the user know.
func (s *Service) serverPort(r *core.Request, rule string, check func(*lifecycle.Server) error) (*lifecycle.Server, string, store.Port, bool, error) {
	id := r.PathValue("port")
	sv, err := s.visibleServer(r, r.PathValue("id"), rule)
	if err == nil && check != nil {
		err = check(sv)
	}
	if err != nil {
		return nil, id, store.Port{}, false, err
	}
	p, ok, err := s.portByVIF(r.Context(), sv.ID, id)
	return sv, id, p, ok, err
}

// portByVIF is the server's port Ironic and the user know by id.
func (s *Service) portByVIF(ctx context.Context, serverID, id string) (store.Port, bool, error) {
	return s.findPort(ctx, serverID, func(p store.Port) bool { return strings.EqualFold(p.VIF(), id) })
}

// findPort is the server's first port that match takes.
func (s *Service) findPort(ctx context.Context, serverID string, match func(store.Port) bool) (store.Port, bool, error) {
	ports, err := s.Cfg.Store.Ports(ctx, serverID)
	if err != nil {
		return store.Port{}, false, fmt.Errorf("ports of %s: %w", serverID, err)
	}
	for _, p := range ports {
		if match(p) {
			return p, true, nil
		}
	}
	return store.Port{}, false, nil
}

// detachInterface is DELETE /servers/{id}/os-interface/{port}: 202 once
// the detach is recorded.
func (s *Service) detachInterface(w http.ResponseWriter, r *core.Request) error {
	op := opRequest{kind: lifecycle.OpDetachInterface}
	check := func(sv *lifecycle.Server) error { return checkOp(sv, op, r.IsAdmin()) }
	sv, id, p, ok, err := s.serverPort(r, policy.InterfacesDelete, check)
	if err != nil {
		return err
	}
	if !ok {
		return core.NotFound("Port %s is not attached", id)
	}
	op.network, op.port = p.NetworkID, p.ID
	if _, err := s.recordOp(r, sv, op); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}
