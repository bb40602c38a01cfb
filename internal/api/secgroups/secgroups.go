// Package secgroups serves Nova's security group proxy over Neutron
// (os-security-groups and os-security-group-rules, until 2.35) with the
// caller's token, and formats groups in Nova's shape for the server
// routes. With the embedded network backend there are no security groups
// and nothing here is served.
package secgroups

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/neutron"
)

// Service serves this package's routes over the shared core.
type Service struct {
	*core.Env
}

// New returns the service over env.
func New(env *core.Env) *Service { return &Service{Env: env} }

// mvNoProxy is 2.36: the proxies gone.
const mvNoProxy = 36

// Register adds the proxy's routes when Neutron is the network backend.
func (s *Service) Register() {
	if s.Cfg.SecurityGroupsAs == nil {
		return
	}
	s.Compute("GET /v2.1/os-security-groups", s.list)
	s.Compute("POST /v2.1/os-security-groups", s.create)
	s.Compute("GET /v2.1/os-security-groups/{id}", s.show)
	s.Compute("PUT /v2.1/os-security-groups/{id}", s.update)
	s.Compute("DELETE /v2.1/os-security-groups/{id}", s.delete)
	s.Compute("POST /v2.1/os-security-group-rules", s.createRule)
	s.Compute("DELETE /v2.1/os-security-group-rules/{id}", s.deleteRule)
}

// Group is a security group in Nova's shape.
type Group struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	TenantID    string `json:"tenant_id"`
	Rules       []Rule `json:"rules"`
}

// Rule is an ingress rule in Nova's shape: group names the remote group
// ({} for a CIDR rule), ip_range the CIDR ({} for a group rule).
type Rule struct {
	ID            string            `json:"id"`
	ParentGroupID string            `json:"parent_group_id"`
	IPProtocol    *string           `json:"ip_protocol"`
	FromPort      *int              `json:"from_port"`
	ToPort        *int              `json:"to_port"`
	Group         map[string]string `json:"group"`
	IPRange       map[string]string `json:"ip_range"`
}

// Names resolves remote groups to {name, tenant_id}: the groups in scope
// first, then one read each (a group gone meanwhile drops its rules).
type Names func(id string) (map[string]string, bool)

// NamesOf is Names over groups, reading others with sg.
func NamesOf(r *core.Request, sg core.SecurityGroups, groups []neutron.SecurityGroup) Names {
	known := map[string]map[string]string{}
	for _, g := range groups {
		known[g.ID] = map[string]string{"name": g.Name, "tenant_id": g.ProjectID}
	}
	return func(id string) (map[string]string, bool) {
		if v, ok := known[id]; ok {
			return v, v != nil
		}
		g, err := sg.GetSecurityGroup(r.Context(), id)
		if err != nil {
			known[id] = nil
			return nil, false
		}
		known[id] = map[string]string{"name": g.Name, "tenant_id": g.ProjectID}
		return known[id], true
	}
}

// Format is g in Nova's shape: its ingress rules only, as Nova shows them.
func Format(g neutron.SecurityGroup, names Names) Group {
	out := Group{ID: g.ID, Name: g.Name, Description: g.Description, TenantID: g.ProjectID, Rules: []Rule{}}
	for _, rule := range g.Rules {
		if rule.Direction != "ingress" {
			continue
		}
		if f, ok := formatRule(rule, names); ok {
			out.Rules = append(out.Rules, f)
		}
	}
	return out
}

func formatRule(rule neutron.SecurityGroupRule, names Names) (Rule, bool) {
	f := Rule{ID: rule.ID, ParentGroupID: rule.SecurityGroupID, IPProtocol: rule.Protocol,
		FromPort: rule.PortRangeMin, ToPort: rule.PortRangeMax, Group: map[string]string{}, IPRange: map[string]string{}}
	if rule.Protocol != nil && rule.PortRangeMin == nil && rule.PortRangeMax == nil {
		lo, hi := -1, -1
		if p := strings.ToUpper(*rule.Protocol); p == "TCP" || p == "UDP" {
			lo, hi = 1, 65535
		}
		f.FromPort, f.ToPort = &lo, &hi
	}
	if rule.RemoteGroupID != nil && *rule.RemoteGroupID != "" {
		g, ok := names(*rule.RemoteGroupID)
		if !ok {
			return f, false
		}
		f.Group = g
		return f, true
	}
	cidr := "0.0.0.0/0"
	if rule.RemoteIPPrefix != nil && *rule.RemoteIPPrefix != "" {
		cidr = *rule.RemoteIPPrefix
	}
	f.IPRange = map[string]string{"cidr": cidr}
	return f, true
}

// Sort orders groups as Nova's answers do: by tenant, then name.
func Sort(groups []Group) {
	slices.SortStableFunc(groups, func(a, b Group) int {
		if c := strings.Compare(a.TenantID, b.TenantID); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// Resolve finds the project's group called name (or with that id), as
// Nova's find_resourceid_by_name_or_id: notFound when none, 409 when the
// name is not unique.
func Resolve(r *core.Request, sg core.SecurityGroups, project, name string, notFound error) (string, error) {
	groups, err := sg.ListSecurityGroups(r.Context(), project)
	if err != nil {
		return "", core.NeutronError(err, notFound)
	}
	var ids []string
	for _, g := range groups {
		if g.ID == name {
			return g.ID, nil
		}
		if g.Name == name {
			ids = append(ids, g.ID)
		}
	}
	switch len(ids) {
	case 0:
		return "", notFound
	case 1:
		return ids[0], nil
	}
	return "", core.Conflict("Multiple security_group matches found for name '%s', use an ID to be more specific.", name)
}

// proxy checks the microversion and the rule, and returns the caller's
// Neutron client.
func (s *Service) proxy(r *core.Request, rule string) (core.SecurityGroups, error) {
	if r.MV.AtLeast(mvNoProxy) {
		return nil, core.NotFound("The resource could not be found.")
	}
	if err := r.Authorize(rule, r.Own()); err != nil {
		return nil, err
	}
	return s.Cfg.SecurityGroupsAs(r.Token()), nil
}

// groupID checks a path's id as Nova's validate_id.
func groupID(r *core.Request) (string, error) {
	id := r.PathValue("id")
	if !core.IsUUID(id) {
		return "", core.BadRequest("Security group id should be uuid")
	}
	return id, nil
}

func notFound(id string) error {
	return core.NotFound("Security group %s not found.", id)
}

// limited is Nova's common.limited: offset and limit on a list.
func limited[T any](r *core.Request, items []T) ([]T, error) {
	q := r.URL.Query()
	offset, limit := 0, len(items)
	for k, p := range map[string]*int{"offset": &offset, "limit": &limit} {
		if v := q.Get(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, core.BadRequest("%s param must be an integer", k)
			}
			*p = n
		}
	}
	if offset > len(items) {
		offset = len(items)
	}
	return items[offset:min(len(items), offset+limit)], nil
}

func writeGroup(w http.ResponseWriter, status int, g Group) {
	core.WriteJSON(w, status, map[string]Group{"security_group": g})
}
