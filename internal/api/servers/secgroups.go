package servers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/api/secgroups"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// With Neutron, security groups are Neutron's, as with Nova: a create's
// security_groups are resolved in the caller's project and applied to the
// ports ingot makes; add/removeSecurityGroup change the server's ports in
// Neutron at once (as Nova's API does), and the server records the names
// it shows. On bare metal nothing enforces a group unless the cloud's
// switches do (the Neutron ML2 driver's job, docs/clients.md).

// resolveSecurityGroups reads [{"name": …}] and resolves each name (or
// id) in the caller's project; "default" alone is left to Neutron. A
// user's own port keeps its groups, as Nova leaves them.
func (s *Service) resolveSecurityGroups(r *core.Request, raw json.RawMessage) (names, ids []string, err error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil, nil
	}
	var groups []map[string]json.RawMessage
	if json.Unmarshal(raw, &groups) != nil {
		return nil, nil, core.BadRequest("Invalid input for field/attribute security_groups. Value: %s. It is not of type 'array' of objects.", raw)
	}
	for _, g := range groups {
		var name string
		for k, v := range g {
			if k != "name" || json.Unmarshal(v, &name) != nil || name == "" || len(name) > 255 {
				return nil, nil, core.BadRequest("Invalid input for field/attribute security_groups. Value: %s.", raw)
			}
		}
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 || slices.Equal(names, []string{"default"}) {
		return names, nil, nil
	}
	sg := s.Cfg.SecurityGroupsAs(r.Token())
	for _, name := range names {
		id, err := secgroups.Resolve(r, sg, r.Ident.ProjectID, name,
			core.BadRequest("Unable to find security_group with name or id '%s'", name))
		if err != nil {
			return nil, nil, err
		}
		ids = append(ids, id)
	}
	return names, ids, nil
}

// groupNames is the server's security_groups member: the names asked for,
// "default" when none were, nothing (the member left out) once every group
// was removed.
func groupNames(sv *lifecycle.Server) []map[string]string {
	if sv.Spec.NoSecurityGroups {
		return nil
	}
	if len(sv.Spec.SecurityGroups) == 0 {
		return []map[string]string{{"name": "default"}}
	}
	out := make([]map[string]string, 0, len(sv.Spec.SecurityGroups))
	for _, n := range sv.Spec.SecurityGroups {
		out = append(out, map[string]string{"name": n})
	}
	return out
}

// serverSecurityGroups answers GET /servers/{id}/os-security-groups: with
// Neutron, the groups of the server's ports in Nova's shape; without it,
// none (the embedded networks have no security groups).
func (s *Service) serverSecurityGroups(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.SecurityGroupsList)
	if err != nil {
		return err
	}
	out := []secgroups.Group{}
	if s.Cfg.SecurityGroupsAs != nil {
		sg := s.Cfg.SecurityGroupsAs(r.Token())
		ports, err := sg.ListPorts(r.Context(), neutron.PortFilter{DeviceID: sv.ID})
		if err != nil {
			return core.NeutronError(err, core.NotFound("Instance %s could not be found.", sv.ID))
		}
		// One list of the project's groups rather than a read per group.
		all, err := sg.ListSecurityGroups(r.Context(), sv.ProjectID)
		if err != nil {
			return core.NeutronError(err, core.NotFound("Instance %s could not be found.", sv.ID))
		}
		onPorts := map[string]bool{}
		for _, p := range ports {
			for _, id := range p.SecurityGroups {
				onPorts[id] = true
			}
		}
		var groups []neutron.SecurityGroup
		for _, g := range all {
			if onPorts[g.ID] {
				groups = append(groups, g)
			}
		}
		names := secgroups.NamesOf(r, sg, groups)
		for _, g := range groups {
			out = append(out, secgroups.Format(g, names))
		}
		secgroups.Sort(out)
	}
	core.WriteJSON(w, http.StatusOK, map[string][]secgroups.Group{"security_groups": out})
	return nil
}

// securityGroupAction is addSecurityGroup or removeSecurityGroup
// ({"name": …}) with Neutron: every port of the server changed in Neutron
// (idempotent: a group already there, or already gone, is left), then the
// names the server shows recorded; 202 once both are done.
func securityGroupAction(add bool) actionFunc {
	name, rule := "removeSecurityGroup", policy.SecurityGroupsRemove
	if add {
		name, rule = "addSecurityGroup", policy.SecurityGroupsAdd
	}
	return func(s *Service, w http.ResponseWriter, r *core.Request, raw json.RawMessage) error {
		if s.Cfg.SecurityGroupsAs == nil {
			return s.unservedAction(r, name, raw)
		}
		sv, err := s.visibleServer(r, r.PathValue("id"), rule)
		if err != nil {
			return err
		}
		var body map[string]json.RawMessage
		if json.Unmarshal(raw, &body) != nil || body == nil {
			return core.BadRequest("Missing parameter dict")
		}
		var group string
		if v, ok := body["name"]; !ok || json.Unmarshal(v, &group) != nil {
			return core.BadRequest("Security group not specified")
		}
		if strings.TrimSpace(group) == "" {
			return core.BadRequest("Security group name cannot be empty")
		}
		sg := s.Cfg.SecurityGroupsAs(r.Token())
		id, err := secgroups.Resolve(r, sg, r.Ident.ProjectID, group,
			core.NotFound("Security group %s is not found for project %s", group, r.Ident.ProjectID))
		if err != nil {
			return err
		}
		ports, err := sg.ListPorts(r.Context(), neutron.PortFilter{DeviceID: sv.ID})
		if err != nil {
			return core.NeutronError(err, core.NotFound("Instance %s could not be found.", sv.ID))
		}
		if len(ports) == 0 {
			return core.NotFound("instance_id %s could not be found as device id on any ports", sv.ID)
		}
		found := false
		var applied []string // the first port's groups after the change
		for i, p := range ports {
			has := slices.Contains(p.SecurityGroups, id)
			found = found || has
			want := p.SecurityGroups
			if i == 0 {
				applied = want
				if add && !has {
					applied = append(slices.Clone(want), id)
				} else if !add && has {
					applied = slices.DeleteFunc(slices.Clone(want), func(g string) bool { return g == id })
				}
			}
			switch {
			case add && !has:
				want = append(slices.Clone(p.SecurityGroups), id)
			case !add && has:
				want = slices.DeleteFunc(slices.Clone(p.SecurityGroups), func(g string) bool { return g == id })
			default:
				continue
			}
			if _, err := sg.SetPortSecurityGroups(r.Context(), p.ID, want); err != nil {
				if errors.Is(err, neutron.ErrBadRequest) {
					return core.BadRequest("Network requires port_security_enabled and subnet associated in order to apply security groups.")
				}
				return core.NeutronError(err, core.NotFound("Port %s could not be found.", p.ID))
			}
		}
		if !add && !found {
			return core.NotFound("Security group %s not associated with the instance %s", group, sv.ID)
		}
		if err := s.recordGroups(r, sv.ID, group, add, applied); err != nil {
			return err
		}
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
}

// recordGroups adds or removes name among the names the server shows, and
// records the groups its ports now have (applied, read back from Neutron's
// answer), so that a port made later (an attach, a rebuilt allocation)
// gets the server's current groups, not the create's.
func (s *Service) recordGroups(r *core.Request, id, name string, add bool, applied []string) error {
	now := s.Cfg.Clock.Now().UTC()
	_, err := s.Cfg.Store.UpdateServer(r.Context(), id, nil, func(cur *lifecycle.Server) error {
		names := cur.Spec.SecurityGroups
		if len(names) == 0 && !cur.Spec.NoSecurityGroups {
			names = []string{"default"}
		}
		names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == name })
		if add {
			names = append(names, name)
		}
		if len(names) == 0 {
			names = nil
		}
		cur.Spec.SecurityGroups, cur.Spec.NoSecurityGroups, cur.UpdatedAt = names, names == nil, now
		cur.Spec.SecurityGroupIDs = slices.Clone(applied)
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return core.NotFound("Instance %s could not be found.", id)
	}
	if err != nil {
		return fmt.Errorf("record the security groups of server %s: %w", id, err)
	}
	return nil
}
