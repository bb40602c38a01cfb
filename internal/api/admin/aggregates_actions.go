package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// internalZone is Nova's zone of the services that are not nova-compute.
const internalZone = "internal"

// aggregateAction is POST /os-aggregates/{id}/action: one of add_host,
// remove_host or set_metadata, each under its own rule.
func (s *Service) aggregateAction(w http.ResponseWriter, r *core.Request) error {
	body, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	if len(body) != 1 {
		r.Authorized = true // nothing to check a rule for: no action named
		return core.BadRequest("The action body must have exactly one of add_host, remove_host or set_metadata.")
	}
	rules := map[string]string{
		"add_host": policy.AggregatesAddHost, "remove_host": policy.AggregatesRemoveHost,
		"set_metadata": policy.AggregatesSetMetadata,
	}
	var action string
	var raw json.RawMessage
	for action, raw = range body {
	}
	rule, ok := rules[action]
	if !ok {
		r.Authorized = true
		return core.BadRequest("There is no such action: %s", action)
	}
	if err := r.Authorize(rule, r.Own()); err != nil {
		return err
	}
	id, err := aggregateID(r)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return core.BadRequest("Invalid input for field/attribute %s. Value: %s. It is not of type 'object'.", action, raw)
	}
	want := "host"
	if action == "set_metadata" {
		want = "metadata"
	}
	for k := range fields {
		if k != want {
			return core.BadRequest("Invalid input for field/attribute %s. Additional properties are not allowed ('%s' was unexpected).", action, k)
		}
	}
	if _, ok := fields[want]; !ok {
		return core.BadRequest("Invalid input for field/attribute %s. '%s' is a required property.", action, want)
	}
	if action == "set_metadata" {
		meta, err := aggregateMetadata(fields["metadata"])
		if err != nil {
			return err
		}
		if z, ok := meta[store.AggregateAZKey]; ok && z != nil {
			if _, err := aggregateZone(json.RawMessage(strconvQuote(*z))); err != nil {
				return err
			}
		}
		return s.changeAggregate(w, r, id, nil, meta, "update metadata of aggregate")
	}
	host, err := core.RequiredString(fields, "host", 255)
	if err != nil {
		return err
	}
	if !core.HostnameRE.MatchString(host) {
		return core.BadRequest("Invalid input for field/attribute host. Value: %s. It is not a valid host name.", host)
	}
	if action == "add_host" {
		return s.addAggregateHost(w, r, id, host)
	}
	return s.removeAggregateHost(w, r, id, host)
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// aggregateMetadata reads Nova's metadata_with_null: keys of 1 to 255
// letters, digits and "-_:. ", values strings of at most 255 or null
// (null removes the key).
func aggregateMetadata(raw json.RawMessage) (map[string]*string, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, core.BadRequest("Invalid input for field/attribute metadata. Value: %s. It is not of type 'object'.", raw)
	}
	out := map[string]*string{}
	for k, v := range m {
		if !core.MetadataKey.MatchString(k) {
			return nil, core.BadRequest("Invalid input for field/attribute metadata. Additional properties are not allowed ('%s' was unexpected).", k)
		}
		if string(v) == "null" {
			out[k] = nil
			continue
		}
		var sv string
		if json.Unmarshal(v, &sv) != nil {
			return nil, core.BadRequest("Invalid input for field/attribute %s. Value: %s. It is not of type 'string', 'null'.", k, v)
		}
		if len([]rune(sv)) > 255 {
			return nil, core.BadRequest("Invalid input for field/attribute %s. It is longer than 255 characters.", k)
		}
		out[k] = &sv
	}
	return out, nil
}

// isComputeHost reports whether host runs a nova-compute service.
func (s *Service) isComputeHost(r *core.Request, host string) (bool, error) {
	all, err := s.Cfg.Store.ListServices(r.Context())
	if err != nil {
		return false, fmt.Errorf("list services: %w", err)
	}
	return slices.ContainsFunc(store.ComputeServices(all), func(sv store.Service) bool { return sv.Host == host }), nil
}

func (s *Service) addAggregateHost(w http.ResponseWriter, r *core.Request, id int64, host string) error {
	a, err := s.Cfg.Store.GetAggregate(r.Context(), id)
	if err != nil {
		return s.aggregateErr(err, id, "")
	}
	if ok, err := s.isComputeHost(r, host); err != nil {
		return err
	} else if !ok {
		return core.NotFound("Compute host %s could not be found.", host)
	}
	if z, ok := a.Metadata[store.AggregateAZKey]; ok {
		if err := s.zoneFree(r, a, []string{host}, z); err != nil {
			return core.Conflict("Cannot add host to aggregate %d. Reason: %v.", id, err)
		}
	}
	a, err = s.Cfg.Store.AddAggregateHost(r.Context(), id, host, s.Cfg.Clock.Now())
	if errors.Is(err, store.ErrExists) {
		return core.Conflict("Aggregate %d already has host %s.", id, host)
	}
	if err != nil {
		return s.aggregateErr(err, id, "")
	}
	return s.writeAggregate(w, r, a, true)
}

// removeAggregateHost answers 404 for an unknown aggregate, an unknown host
// and a host not in the aggregate alike, with Nova's one message.
func (s *Service) removeAggregateHost(w http.ResponseWriter, r *core.Request, id int64, host string) error {
	gone := core.NotFound("Cannot remove host %s in aggregate %d", host, id)
	if ok, err := s.isComputeHost(r, host); err != nil {
		return err
	} else if !ok {
		// Nova looks the host up first; a host whose service record was
		// deleted can still be removed, so only refuse it when absent.
		a, err := s.Cfg.Store.GetAggregate(r.Context(), id)
		if err != nil || !slices.Contains(a.Hosts, host) {
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("aggregate %d: %w", id, err)
			}
			return gone
		}
	}
	a, err := s.Cfg.Store.RemoveAggregateHost(r.Context(), id, host, s.Cfg.Clock.Now())
	if errors.Is(err, store.ErrNotFound) {
		return gone
	}
	if err != nil {
		return fmt.Errorf("aggregate %d: %w", id, err)
	}
	return s.writeAggregate(w, r, a, true)
}
