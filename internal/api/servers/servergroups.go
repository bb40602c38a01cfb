package servers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// os-server-groups. The scheduler enforces a group's policy with each
// Ironic node as a host (internal/scheduler, groups.go); a server joins its
// group (the group scheduler hint) in its create transaction. The server
// body's server_groups member (2.71) is Store.ServerGroupsOf.

func (s *Service) GroupRoutes() {
	s.Compute("POST /v2.1/os-server-groups", s.createServerGroup)
	s.Compute("GET /v2.1/os-server-groups", s.listServerGroups)
	s.Compute("GET /v2.1/os-server-groups/{id}", s.showServerGroup)
	s.Compute("DELETE /v2.1/os-server-groups/{id}", s.deleteServerGroup)
}

// serverGroupView is a server group: policies and metadata below 2.64,
// policy and rules from it, the owner from 2.13.
type serverGroupView struct {
	ID        string          `json:"id"`
	Members   []string        `json:"members"`
	Metadata  *struct{}       `json:"metadata,omitempty"`
	Name      string          `json:"name"`
	Policies  []string        `json:"policies,omitempty"`
	Policy    *string         `json:"policy,omitempty"`
	ProjectID *string         `json:"project_id,omitempty"`
	Rules     *groupRulesView `json:"rules,omitempty"`
	UserID    *string         `json:"user_id,omitempty"`
}

type groupRulesView struct {
	MaxServerPerHost int `json:"max_server_per_host,omitempty"`
}

func (s *Service) serverGroupView(r *core.Request, g store.ServerGroup) serverGroupView {
	members := g.Members
	if members == nil {
		members = []string{}
	}
	v := serverGroupView{ID: g.ID, Name: g.Name, Members: members}
	if r.MV.AtLeast(mvGroupPolicy) {
		v.Policy, v.Rules = &g.Policy, &groupRulesView{MaxServerPerHost: g.MaxServerPerHost}
	} else {
		v.Policies, v.Metadata = []string{g.Policy}, &struct{}{}
	}
	if r.MV.AtLeast(mvGroupOwner) {
		v.ProjectID, v.UserID = &g.ProjectID, &g.UserID
	}
	return v
}

type serverGroupBody struct {
	ServerGroup serverGroupView `json:"server_group"`
}

func validPolicy(mv core.Version, p string) bool {
	switch p {
	case store.PolicyAffinity, store.PolicyAntiAffinity:
		return true
	case store.PolicySoftAffinity, store.PolicySoftAntiAffinity:
		return mv.AtLeast(mvSoftAffinity)
	}
	return false
}

func (s *Service) createServerGroup(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.ServerGroupsCreate, r.Own()); err != nil {
		return err
	}
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(top["server_group"], &fields) != nil || fields == nil || len(top) != 1 {
		return core.BadRequest("Invalid input for field/attribute server_group: want {\"server_group\": {name, policy…}}.")
	}
	want := []string{"name", "policies"}
	if r.MV.AtLeast(mvGroupPolicy) {
		want = []string{"name", "policy", "rules"}
	}
	for k := range fields {
		known := false
		for _, w := range want {
			known = known || k == w
		}
		if !known {
			return core.BadRequest("Invalid input for field/attribute server_group. Additional properties are not allowed ('%s' was unexpected).", k)
		}
	}
	g := store.ServerGroup{ID: uuid.NewString(), ProjectID: r.Ident.ProjectID, UserID: r.Ident.UserID,
		CreatedAt: s.Cfg.Clock.Now().UTC()}
	if g.Name, err = core.RequiredString(fields, "name", 255); err != nil {
		return err
	}
	if err := core.CheckName("name", g.Name); err != nil {
		return err
	}
	if r.MV.AtLeast(mvGroupPolicy) {
		if g.Policy, err = core.RequiredString(fields, "policy", 255); err != nil {
			return err
		}
		if g.MaxServerPerHost, err = groupRules(fields["rules"], g.Policy); err != nil {
			return err
		}
	} else {
		var policies []string
		if json.Unmarshal(fields["policies"], &policies) != nil || len(policies) != 1 {
			return core.BadRequest("Invalid input for field/attribute policies. Value: %s. It must be a list of one policy.", fields["policies"])
		}
		g.Policy = policies[0]
	}
	if !validPolicy(r.MV, g.Policy) {
		return core.BadRequest("Invalid input for field/attribute policy. Value: %s. It is not one of the policies of this microversion.", g.Policy)
	}
	limits, err := s.quotas.ProjectLimits(r, r.Ident.ProjectID)
	if err != nil {
		return err
	}
	err = s.Cfg.Store.CreateServerGroup(r.Context(), g, limits.Get(store.ResServerGroups))
	var qe *store.QuotaExceededError
	switch {
	case errors.As(err, &qe):
		return core.Forbidden("Quota exceeded, too many server groups.")
	case err != nil:
		return fmt.Errorf("create server group: %w", err)
	}
	g.Members = []string{}
	core.WriteJSON(w, http.StatusOK, serverGroupBody{ServerGroup: s.serverGroupView(r, g)})
	return nil
}

// groupRules reads 2.64 rules: max_server_per_host (an integer >= 1),
// only for anti-affinity.
func groupRules(raw json.RawMessage, pol string) (int, error) {
	if raw == nil {
		return 0, nil
	}
	var rules map[string]json.RawMessage
	if json.Unmarshal(raw, &rules) != nil || rules == nil {
		return 0, core.BadRequest("Invalid input for field/attribute rules. Value: %s. It is not of type 'object'.", raw)
	}
	if len(rules) == 0 {
		return 0, nil
	}
	if pol != store.PolicyAntiAffinity {
		return 0, core.BadRequest("Only anti-affinity policy supports rules.")
	}
	for k := range rules {
		if k != "max_server_per_host" {
			return 0, core.BadRequest("Invalid input for field/attribute rules. Additional properties are not allowed ('%s' was unexpected).", k)
		}
	}
	var n json.Number
	var str string
	v := rules["max_server_per_host"]
	if json.Unmarshal(v, &str) == nil {
		n = json.Number(str)
	} else if json.Unmarshal(v, &n) != nil {
		return 0, core.BadRequest("Invalid input for field/attribute max_server_per_host. Value: %s.", v)
	}
	m, err := strconv.Atoi(string(n))
	if err != nil || m < 1 {
		return 0, core.BadRequest("Invalid input for field/attribute max_server_per_host. Value: %s. It must be an integer of at least 1.", v)
	}
	return m, nil
}

func (s *Service) listServerGroups(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.ServerGroupsIndex, r.Own()); err != nil {
		return err
	}
	q := r.URL.Query()
	project := r.Ident.ProjectID
	// Nova looks at the parameter's presence, not its value.
	if q.Has("all_projects") && r.Can(policy.ServerGroupsIndexAll, r.Own()) {
		project = ""
	}
	groups, err := s.Cfg.Store.ListServerGroups(r.Context(), project)
	if err != nil {
		return fmt.Errorf("list server groups: %w", err)
	}
	offset, err := core.IntParam(q.Get("offset"), "offset")
	if err != nil {
		return err
	}
	limit, err := core.IntParam(q.Get("limit"), "limit")
	if err != nil {
		return err
	}
	if offset > len(groups) {
		offset = len(groups)
	}
	groups = groups[offset:]
	if q.Has("limit") && limit < len(groups) {
		groups = groups[:limit]
	}
	out := make([]serverGroupView, 0, len(groups))
	for _, g := range groups {
		out = append(out, s.serverGroupView(r, g))
	}
	core.WriteJSON(w, http.StatusOK, struct {
		ServerGroups []serverGroupView `json:"server_groups"`
	}{out})
	return nil
}

// visibleGroup loads a group of the caller's project (any, for an admin):
// another project's group is 404, as in Nova.
func (s *Service) visibleGroup(r *core.Request, id, rule string) (store.ServerGroup, error) {
	g, err := s.Cfg.Store.GetServerGroup(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !r.Sees(g.ProjectID)) {
		r.Authorized = true
		return g, core.NotFound("Instance group %s could not be found.", id)
	}
	if err != nil {
		return g, fmt.Errorf("server group %s: %w", id, err)
	}
	if err := r.Authorize(rule, core.Target(g.ProjectID, g.UserID)); err != nil {
		return g, err
	}
	return g, nil
}

func (s *Service) showServerGroup(w http.ResponseWriter, r *core.Request) error {
	g, err := s.visibleGroup(r, r.PathValue("id"), policy.ServerGroupsShow)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, serverGroupBody{ServerGroup: s.serverGroupView(r, g)})
	return nil
}

func (s *Service) deleteServerGroup(w http.ResponseWriter, r *core.Request) error {
	g, err := s.visibleGroup(r, r.PathValue("id"), policy.ServerGroupsDelete)
	if err != nil {
		return err
	}
	if err := s.Cfg.Store.DeleteServerGroup(r.Context(), g.ID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return core.NotFound("Instance group %s could not be found.", g.ID)
		}
		return fmt.Errorf("delete server group %s: %w", g.ID, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// resolveGroup reads the group scheduler hint of a create: a UUID naming
// a group the caller's project can see (400 otherwise, as Nova).
func (s *Service) resolveGroup(r *core.Request, top map[string]json.RawMessage) (*lifecycle.GroupRef, error) {
	raw, ok := top["os:scheduler_hints"]
	if !ok {
		raw = top["OS-SCH-HNT:scheduler_hints"]
	}
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var hints map[string]json.RawMessage
	if json.Unmarshal(raw, &hints) != nil {
		return nil, core.BadRequest("Invalid input for field/attribute os:scheduler_hints. Value: %s. It is not of type 'object'.", raw)
	}
	gr, ok := hints["group"]
	if !ok {
		return nil, nil
	}
	var id string
	if json.Unmarshal(gr, &id) != nil || !core.IsUUID(id) {
		return nil, core.BadRequest("Invalid input for field/attribute group. Value: %s. It is not a 'uuid'.", gr)
	}
	g, err := s.Cfg.Store.GetServerGroup(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !r.Sees(g.ProjectID)) {
		return nil, core.BadRequest("Instance group %s could not be found.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("server group %s: %w", id, err)
	}
	return &lifecycle.GroupRef{ID: g.ID, Policy: g.Policy, MaxPerHost: g.MaxServerPerHost}, nil
}
