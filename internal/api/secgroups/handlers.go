package secgroups

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/policy"
)

func (s *Service) list(w http.ResponseWriter, r *core.Request) error {
	sg, err := s.proxy(r, policy.SecurityGroupsGet)
	if err != nil {
		return err
	}
	project := r.Ident.ProjectID
	if r.IsAdmin() && r.URL.Query().Has("all_tenants") {
		project = ""
	}
	groups, err := sg.ListSecurityGroups(r.Context(), project)
	if err != nil {
		return core.NeutronError(err, core.NotFound("Security groups not found."))
	}
	groups, err = limited(r, groups)
	if err != nil {
		return err
	}
	names := NamesOf(r, sg, groups)
	out := make([]Group, 0, len(groups))
	for _, g := range groups {
		out = append(out, Format(g, names))
	}
	Sort(out)
	core.WriteJSON(w, http.StatusOK, map[string][]Group{"security_groups": out})
	return nil
}

func (s *Service) show(w http.ResponseWriter, r *core.Request) error {
	sg, err := s.proxy(r, policy.SecurityGroupsShow)
	if err != nil {
		return err
	}
	id, err := groupID(r)
	if err != nil {
		return err
	}
	g, err := sg.GetSecurityGroup(r.Context(), id)
	if err != nil {
		return core.NeutronError(err, notFound(id))
	}
	writeGroup(w, http.StatusOK, Format(g, NamesOf(r, sg, []neutron.SecurityGroup{g})))
	return nil
}

// groupBody reads {"security_group": {"name", "description"}}: both
// strings of at most 255 characters, as Nova's validate_property.
func groupBody(r *core.Request) (name, description string, err error) {
	fields, err := member(r, "security_group")
	if err != nil {
		return "", "", err
	}
	for key, out := range map[string]*string{"name": &name, "description": &description} {
		raw, ok := fields[key]
		if !ok || json.Unmarshal(raw, out) != nil {
			return "", "", core.BadRequest("Invalid input received: %s has to be a string", key)
		}
		if utf8.RuneCountInString(*out) > 255 || core.HasControl(*out) {
			return "", "", core.BadRequest("Invalid input received: %s has a minimum character requirement of 0 and a maximum of 255.", key)
		}
	}
	return name, description, nil
}

// member reads the body's key object, with Nova's _from_body answers.
func member(r *core.Request, key string) (map[string]json.RawMessage, error) {
	body, err := core.ReadJSONObject(r.Request)
	if err != nil || len(body) == 0 {
		return nil, core.BadRequest("The request body can't be empty")
	}
	raw, ok := body[key]
	var fields map[string]json.RawMessage
	if !ok || string(raw) == "null" || json.Unmarshal(raw, &fields) != nil {
		return nil, core.BadRequest("Missing parameter %s", key)
	}
	return fields, nil
}

func (s *Service) create(w http.ResponseWriter, r *core.Request) error {
	sg, err := s.proxy(r, policy.SecurityGroupsCreate)
	if err != nil {
		return err
	}
	name, description, err := groupBody(r)
	if err != nil {
		return err
	}
	g, err := sg.CreateSecurityGroup(r.Context(), name, description)
	if errors.Is(err, neutron.ErrConflict) {
		return core.Forbidden("Quota exceeded, too many security groups.")
	}
	if err != nil {
		return core.NeutronError(err, core.NotFound("Security group not found."))
	}
	writeGroup(w, http.StatusOK, Format(g, NamesOf(r, sg, []neutron.SecurityGroup{g})))
	return nil
}

// existing is proxy for the path's group, which must exist.
func (s *Service) existing(r *core.Request, rule string) (core.SecurityGroups, string, error) {
	sg, err := s.proxy(r, rule)
	if err != nil {
		return nil, "", err
	}
	id, err := groupID(r)
	if err != nil {
		return nil, "", err
	}
	if _, err := sg.GetSecurityGroup(r.Context(), id); err != nil {
		return nil, "", core.NeutronError(err, notFound(id))
	}
	return sg, id, nil
}

func (s *Service) update(w http.ResponseWriter, r *core.Request) error {
	sg, id, err := s.existing(r, policy.SecurityGroupsUpdate)
	if err != nil {
		return err
	}
	name, description, err := groupBody(r)
	if err != nil {
		return err
	}
	g, err := sg.UpdateSecurityGroup(r.Context(), id, name, description)
	if err != nil {
		return core.NeutronError(err, notFound(id))
	}
	writeGroup(w, http.StatusOK, Format(g, NamesOf(r, sg, []neutron.SecurityGroup{g})))
	return nil
}

func (s *Service) delete(w http.ResponseWriter, r *core.Request) error {
	sg, id, err := s.existing(r, policy.SecurityGroupsDelete)
	if err != nil {
		return err
	}
	if err := sg.DeleteSecurityGroup(r.Context(), id); err != nil {
		return core.NeutronError(err, notFound(id))
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// ruleRequest is os-security-group-rules' body.
type ruleRequest struct {
	ParentGroupID string  `json:"parent_group_id"`
	IPProtocol    *string `json:"ip_protocol"`
	FromPort      any     `json:"from_port"`
	ToPort        any     `json:"to_port"`
	CIDR          *string `json:"cidr"`
	GroupID       *string `json:"group_id"`
}

func (s *Service) createRule(w http.ResponseWriter, r *core.Request) error {
	sg, err := s.proxy(r, policy.SecurityGroupsRuleAdd)
	if err != nil {
		return err
	}
	fields, err := member(r, "security_group_rule")
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(fields)
	var req ruleRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return core.BadRequest("Invalid input received: %v", err)
	}
	if !core.IsUUID(req.ParentGroupID) {
		return core.BadRequest("Security group id should be uuid")
	}
	parent, err := sg.GetSecurityGroup(r.Context(), req.ParentGroupID)
	if err != nil {
		return core.NeutronError(err, notFound(req.ParentGroupID))
	}
	groups := []neutron.SecurityGroup{parent}
	if req.GroupID != nil {
		if !core.IsUUID(*req.GroupID) {
			return core.BadRequest("Security group id should be uuid")
		}
		src, err := sg.GetSecurityGroup(r.Context(), *req.GroupID)
		if err != nil {
			return core.NeutronError(err, notFound(*req.GroupID))
		}
		groups = append(groups, src)
	}
	rule, err := ingressRule(req)
	if err != nil {
		return err
	}
	rule.SecurityGroupID = parent.ID
	if exists(parent, rule) {
		return core.BadRequest("This rule already exists in group %s", parent.ID)
	}
	made, err := sg.CreateSecurityGroupRule(r.Context(), rule)
	if errors.Is(err, neutron.ErrConflict) {
		return core.Forbidden("Quota exceeded, too many security group rules.")
	}
	if err != nil {
		return core.NeutronError(err, notFound(parent.ID))
	}
	f, _ := formatRule(made, NamesOf(r, sg, groups))
	core.WriteJSON(w, http.StatusOK, map[string]Rule{"security_group_rule": f})
	return nil
}

func (s *Service) deleteRule(w http.ResponseWriter, r *core.Request) error {
	sg, err := s.proxy(r, policy.SecurityGroupsRuleDel)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if !core.IsUUID(id) {
		return core.BadRequest("Security group id should be uuid")
	}
	if _, err := sg.GetSecurityGroupRule(r.Context(), id); err != nil {
		return core.NeutronError(err, core.NotFound("Security group rule %s not found.", id))
	}
	if err := sg.DeleteSecurityGroupRule(r.Context(), id); err != nil {
		return core.NeutronError(err, core.NotFound("Security group rule %s not found.", id))
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// ingressRule is Nova's _new_ingress_rule turned into Neutron's rule: a
// group rule or a CIDR rule (0.0.0.0/0 by default), with a protocol and
// ports, or none.
func ingressRule(req ruleRequest) (neutron.SecurityGroupRule, error) {
	rule := neutron.SecurityGroupRule{Direction: "ingress", EtherType: "IPv4"}
	from, to, err := ports(req.FromPort, req.ToPort)
	if err != nil {
		return rule, err
	}
	proto := ""
	if req.IPProtocol != nil {
		proto = *req.IPProtocol
	}
	upper := strings.ToUpper(proto)
	if req.GroupID != nil {
		rule.RemoteGroupID = req.GroupID
		if upper == "ICMP" && from == nil && to == nil {
			from, to = ptr(-1), ptr(-1)
		} else if (upper == "TCP" || upper == "UDP") && from == nil && to == nil {
			from, to = ptr(1), ptr(65535)
		}
	} else {
		cidr := "0.0.0.0/0"
		if req.CIDR != nil && *req.CIDR != "" {
			cidr = *req.CIDR
		}
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			return rule, core.BadRequest("Invalid cidr %s.", cidr)
		}
		if !p.Addr().IsUnspecified() && p.Bits() == 0 {
			return rule, core.BadRequest("Bad prefix for network in cidr %s", cidr)
		}
		if p.Addr().Is6() {
			rule.EtherType = "IPv6"
		}
		rule.RemoteIPPrefix = &cidr
	}
	if proto == "" || from == nil || to == nil {
		if req.GroupID == nil {
			return rule, core.BadRequest("Not enough parameters to build a valid rule.")
		}
		return rule, nil
	}
	switch upper {
	case "TCP", "UDP":
		if *from > *to {
			return rule, core.BadRequest("Invalid port range %d:%d. Former value cannot be greater than the later", *from, *to)
		}
		if *from < 1 || *to > 65535 {
			return rule, core.BadRequest("Invalid port range %d:%d. Valid %s ports should be between 1-65535", *from, *to, upper)
		}
	case "ICMP":
		if *from < -1 || *from > 255 || *to < -1 || *to > 255 {
			return rule, core.BadRequest("Invalid port range %d:%d. For ICMP, the type:code must be valid", *from, *to)
		}
	default:
		return rule, core.BadRequest("Invalid IP protocol %s.", proto)
	}
	rule.Protocol = &proto
	if *from != -1 {
		rule.PortRangeMin = from
	}
	if *to != -1 {
		rule.PortRangeMax = to
	}
	return rule, nil
}

// ports reads from_port and to_port: integers or strings of one.
func ports(from, to any) (*int, *int, error) {
	read := func(v any) (*int, error) {
		switch x := v.(type) {
		case nil:
			return nil, nil
		case float64:
			n := int(x)
			if float64(n) != x {
				return nil, core.BadRequest("Invalid input received: To and From ports must be integers")
			}
			return &n, nil
		case string:
			var n int
			if err := json.Unmarshal([]byte(x), &n); err != nil {
				return nil, core.BadRequest("Invalid input received: To and From ports must be integers")
			}
			return &n, nil
		}
		return nil, core.BadRequest("Invalid input received: To and From ports must be integers")
	}
	f, err := read(from)
	if err != nil {
		return nil, nil, err
	}
	t, err := read(to)
	return f, t, err
}

// exists is Nova's _rule_exists: the same remote, protocol and ports.
func exists(g neutron.SecurityGroup, rule neutron.SecurityGroupRule) bool {
	for _, have := range g.Rules {
		if have.Direction == "ingress" && same(have.RemoteGroupID, rule.RemoteGroupID) && same(have.RemoteIPPrefix, rule.RemoteIPPrefix) &&
			same(have.Protocol, rule.Protocol) && same(have.PortRangeMin, rule.PortRangeMin) && same(have.PortRangeMax, rule.PortRangeMax) {
			return true
		}
	}
	return false
}

func same[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func ptr(n int) *int { return &n }
