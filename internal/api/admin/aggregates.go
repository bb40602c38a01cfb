package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// os-aggregates: host aggregates over the compute services' hosts (one
// per ingot replica), admin only. ingot records them, shows their zones in
// os-availability-zone, os-services and os-hosts, and does not schedule
// by them: no filter reads an aggregate's hosts or metadata.

func (s *Service) AggregateRoutes() {
	s.Compute("GET /v2.1/os-aggregates", s.listAggregates)
	s.Compute("POST /v2.1/os-aggregates", s.createAggregate)
	s.Compute("GET /v2.1/os-aggregates/{id}", s.showAggregate)
	s.Compute("PUT /v2.1/os-aggregates/{id}", s.updateAggregate)
	s.Compute("DELETE /v2.1/os-aggregates/{id}", s.deleteAggregate)
	s.Compute("POST /v2.1/os-aggregates/{id}/action", s.aggregateAction)
}

// aggregateView is Nova's aggregate: hosts and metadata except in the
// create answer, uuid from 2.41, deleted members always false and null.
func aggregateView(r *core.Request, a store.Aggregate, full bool) aggregateItem {
	v := aggregateItem{ID: a.ID, Name: a.Name, AvailabilityZone: aggregateAZ(a),
		CreatedAt: a.CreatedAt.UTC().Format(core.NovaUsecTime)}
	if a.UpdatedAt != nil {
		v.UpdatedAt = core.StrPtr(a.UpdatedAt.UTC().Format(core.NovaUsecTime))
	}
	if full {
		v.Hosts, v.Metadata = a.Hosts, a.Metadata
	}
	if r.MV.AtLeast(mvAggregateUUID) {
		v.UUID = &a.UUID
	}
	return v
}

// aggregateItem is an aggregate; hosts and metadata (null when nil) only
// when full.
type aggregateItem struct {
	AvailabilityZone any     `json:"availability_zone"`
	CreatedAt        string  `json:"created_at"`
	Deleted          bool    `json:"deleted"`
	DeletedAt        *string `json:"deleted_at"`
	Hosts            any     `json:"hosts,omitempty"`
	ID               int64   `json:"id"`
	Metadata         any     `json:"metadata,omitempty"`
	Name             string  `json:"name"`
	UpdatedAt        *string `json:"updated_at"`
	UUID             *string `json:"uuid,omitempty"`
}

// aggregateAZ is the zone an aggregate's metadata names, or null.
func aggregateAZ(a store.Aggregate) any {
	if z, ok := a.Metadata[store.AggregateAZKey]; ok {
		return z
	}
	return nil
}

func (s *Service) writeAggregate(w http.ResponseWriter, r *core.Request, a store.Aggregate, full bool) error {
	core.WriteJSON(w, http.StatusOK, struct {
		Aggregate aggregateItem `json:"aggregate"`
	}{aggregateView(r, a, full)})
	return nil
}

// aggregateID reads the path's id: an integer, as Nova validates it.
func aggregateID(r *core.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return 0, core.BadRequest("Invalid input received: id must be an integer.")
	}
	return id, nil
}

func (s *Service) aggregateErr(err error, id int64, name string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return core.NotFound("Aggregate %d could not be found.", id)
	case errors.Is(err, store.ErrExists):
		return core.Conflict("Aggregate %s already exists.", name)
	}
	return fmt.Errorf("aggregate %d: %w", id, err)
}

func (s *Service) listAggregates(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.AggregatesIndex, r.Own()); err != nil {
		return err
	}
	all, err := s.Cfg.Store.ListAggregates(r.Context())
	if err != nil {
		return fmt.Errorf("list aggregates: %w", err)
	}
	out := []aggregateItem{}
	for _, a := range all {
		out = append(out, aggregateView(r, a, true))
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Aggregates []aggregateItem `json:"aggregates"`
	}{out})
	return nil
}

func (s *Service) showAggregate(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.AggregatesShow, r.Own()); err != nil {
		return err
	}
	id, err := aggregateID(r)
	if err != nil {
		return err
	}
	a, err := s.Cfg.Store.GetAggregate(r.Context(), id)
	if err != nil {
		return s.aggregateErr(err, id, "")
	}
	return s.writeAggregate(w, r, a, true)
}

// aggregateBody reads {"aggregate": {...}} with only the members allowed.
func aggregateBody(r *core.Request, allowed ...string) (map[string]json.RawMessage, error) {
	body, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return nil, err
	}
	for k := range body {
		if k != "aggregate" {
			return nil, core.BadRequest("Invalid input for field/attribute %s. Additional properties are not allowed.", k)
		}
	}
	var fields map[string]json.RawMessage
	if raw, ok := body["aggregate"]; !ok {
		return nil, core.BadRequest("Invalid input for field/attribute aggregate. 'aggregate' is a required property.")
	} else if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return nil, core.BadRequest("Invalid input for field/attribute aggregate. Value: %s. It is not of type 'object'.", raw)
	}
	for k := range fields {
		if !slices.Contains(allowed, k) {
			return nil, core.BadRequest("Invalid input for field/attribute aggregate. Additional properties are not allowed ('%s' was unexpected).", k)
		}
	}
	return fields, nil
}

// aggregateName reads a name of 1 to 255 printable characters; create
// refuses surrounding whitespace, update strips it (Nova's two schemas).
func aggregateName(fields map[string]json.RawMessage, strip bool) (string, error) {
	raw := fields["name"]
	var name string
	if json.Unmarshal(raw, &name) != nil {
		return "", core.BadRequest("Invalid input for field/attribute name. Value: %s. It is not of type 'string'.", raw)
	}
	if strip {
		name = strings.TrimSpace(name)
	}
	if name == "" || len([]rune(name)) > 255 {
		return "", core.BadRequest("Invalid input for field/attribute name. Value: %s. It must be 1 to 255 characters long.", raw)
	}
	return name, core.CheckName("name", name)
}

// aggregateZone reads availability_zone: nil for null, else a name of 1
// to 255 printable characters without ':' that is not the internal zone.
func aggregateZone(raw json.RawMessage) (*string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var z string
	if json.Unmarshal(raw, &z) != nil {
		return nil, core.BadRequest("Invalid input for field/attribute availability_zone. Value: %s. It is not of type 'string'.", raw)
	}
	if z == "" || len([]rune(z)) > 255 || strings.Contains(z, ":") {
		return nil, core.BadRequest("Invalid input for field/attribute availability_zone. Value: %s. It must be 1 to 255 characters without ':'.", raw)
	}
	if err := core.CheckName("availability_zone", z); err != nil {
		return nil, err
	}
	if z == internalZone {
		return nil, core.BadRequest("Aggregates cannot be in the internal availability zone %s.", internalZone)
	}
	return &z, nil
}

func (s *Service) createAggregate(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.AggregatesCreate, r.Own()); err != nil {
		return err
	}
	fields, err := aggregateBody(r, "name", "availability_zone")
	if err != nil {
		return err
	}
	if _, ok := fields["name"]; !ok {
		return core.BadRequest("Invalid input for field/attribute aggregate. 'name' is a required property.")
	}
	name, err := aggregateName(fields, false)
	if err != nil {
		return err
	}
	a := store.Aggregate{Name: name, Metadata: map[string]string{}, CreatedAt: s.Cfg.Clock.Now()}
	if raw, ok := fields["availability_zone"]; ok {
		z, err := aggregateZone(raw)
		if err != nil {
			return err
		}
		if z != nil {
			a.Metadata[store.AggregateAZKey] = *z
		}
	}
	if a, err = s.Cfg.Store.CreateAggregate(r.Context(), a); err != nil {
		return s.aggregateErr(err, 0, name)
	}
	return s.writeAggregate(w, r, a, false)
}

func (s *Service) updateAggregate(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.AggregatesUpdate, r.Own()); err != nil {
		return err
	}
	id, err := aggregateID(r)
	if err != nil {
		return err
	}
	fields, err := aggregateBody(r, "name", "availability_zone")
	if err != nil {
		return err
	}
	if len(fields) == 0 {
		return core.BadRequest("Invalid input for field/attribute aggregate. It must have 'name' or 'availability_zone'.")
	}
	var name *string
	if _, ok := fields["name"]; ok {
		n, err := aggregateName(fields, true)
		if err != nil {
			return err
		}
		name = &n
	}
	meta := map[string]*string{}
	if raw, ok := fields["availability_zone"]; ok {
		if meta[store.AggregateAZKey], err = aggregateZone(raw); err != nil {
			return err
		}
	}
	return s.changeAggregate(w, r, id, name, meta, "update aggregate")
}

// changeAggregate applies a rename and a metadata merge after checking that
// a new zone does not put a host of the aggregate into two zones.
func (s *Service) changeAggregate(w http.ResponseWriter, r *core.Request, id int64, name *string, meta map[string]*string, action string) error {
	a, err := s.Cfg.Store.GetAggregate(r.Context(), id)
	if err != nil {
		return s.aggregateErr(err, id, "")
	}
	if z, ok := meta[store.AggregateAZKey]; ok && z != nil {
		if err := s.zoneFree(r, a, a.Hosts, *z); err != nil {
			return core.BadRequest("Cannot %s %d. Reason: %v", action, id, err)
		}
	}
	n := a.Name
	if name != nil {
		n = *name
	}
	if a, err = s.Cfg.Store.UpdateAggregate(r.Context(), id, name, meta, s.Cfg.Clock.Now()); err != nil {
		return s.aggregateErr(err, id, n)
	}
	return s.writeAggregate(w, r, a, true)
}

// zoneFree reports an error when one of hosts is in an aggregate other
// than a whose zone is not zone (a host is in one zone at most, as Nova).
// It reads before the write: two concurrent changes can still both pass,
// as in Nova.
func (s *Service) zoneFree(r *core.Request, a store.Aggregate, hosts []string, zone string) error {
	all, err := s.Cfg.Store.ListAggregates(r.Context())
	if err != nil {
		return fmt.Errorf("list aggregates: %w", err)
	}
	var clash []string
	for _, o := range all {
		oz, ok := o.Metadata[store.AggregateAZKey]
		if o.ID == a.ID || !ok || oz == zone {
			continue
		}
		for _, h := range hosts {
			if slices.Contains(o.Hosts, h) && !slices.Contains(clash, oz) {
				clash = append(clash, oz)
			}
		}
	}
	if len(clash) > 0 {
		return fmt.Errorf("One or more hosts already in availability zone(s) %v", clash)
	}
	return nil
}

// deleteAggregate answers 200 with no body, as Nova.
func (s *Service) deleteAggregate(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.AggregatesDelete, r.Own()); err != nil {
		return err
	}
	id, err := aggregateID(r)
	if err != nil {
		return err
	}
	if err := s.Cfg.Store.DeleteAggregate(r.Context(), id); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return core.BadRequest("Cannot perform action 'delete' on aggregate %d. Reason: Host aggregate is not empty.", id)
		}
		return s.aggregateErr(err, id, "")
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
