// Package codec is what the SQL stores (internal/store/sqlite and
// internal/store/postgres) share besides their dialects: how a server's
// fields map to columns (times as fixed-width UTC text, the JSON documents)
// and the listing's order and status conditions, which are standard SQL.
// Pure code: no database, no driver.
package codec

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// TimeLayout is fixed-width UTC with nanoseconds: it sorts as text in time
// order (RFC3339Nano drops trailing zeros and would not) and reads back to
// an equal time.Time.
const TimeLayout = "2006-01-02T15:04:05.000000000Z"

// Time encodes t for a nullable column: nil (NULL) for the zero time.
func Time(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(TimeLayout)
}

// TimeNN encodes t for a NOT NULL column.
func TimeNN(t time.Time) string {
	return t.UTC().Format(TimeLayout)
}

// ParseTime decodes a time column (NULL or "": the zero time).
func ParseTime(ns sql.NullString) (time.Time, error) {
	if !ns.Valid || ns.String == "" {
		return time.Time{}, nil
	}
	if t, ok := parseLayout(ns.String); ok {
		return t, nil
	}
	t, err := time.Parse(TimeLayout, ns.String)
	if err != nil {
		if t2, err2 := time.Parse(time.RFC3339Nano, ns.String); err2 == nil {
			return t2.UTC(), nil
		}
		return time.Time{}, fmt.Errorf("bad time %q: %w", ns.String, err)
	}
	return t.UTC(), nil
}

// parseLayout reads TimeLayout's fixed-width form by hand, which is most
// of what a listing spends on its rows' seven times; ok is false for
// anything else, which time.Parse then judges.
func parseLayout(v string) (time.Time, bool) {
	if len(v) != len(TimeLayout) {
		return time.Time{}, false
	}
	num := func(from, to int) int {
		n := 0
		for i := from; i < to; i++ {
			c := v[i]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	if v[4] != '-' || v[7] != '-' || v[10] != 'T' || v[13] != ':' || v[16] != ':' || v[19] != '.' || v[29] != 'Z' {
		return time.Time{}, false
	}
	y, mo, d, h, mi, sec, ns := num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19), num(20, 29)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ns < 0 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC)
	if t.Day() != d { // 31 November and the like: time.Parse's error
		return time.Time{}, false
	}
	return t, true
}

// ServerCols is the column list every server query selects, in ScanServer's order.
const ServerCols = `id, name, project_id, user_id, spec, desired, phase, node_id,
	ext, deploy_requested, ports_allocated, excluded, attempts, fault,
	maintenance_since, created_at, updated_at, phase_since, deadline,
	delete_requested_at, launched_at, create_request_id, delete_request_id, version,
	volumes_on_node, volumes_released, requests`

// Scanner is a row (database/sql's and pgx's both fit).
type Scanner interface{ Scan(dest ...any) error }

// ScanServer reads one row of ServerCols.
func ScanServer(sc Scanner) (*lifecycle.Server, error) {
	var r ServerRow
	if err := r.Scan(sc); err != nil {
		return nil, err
	}
	return r.Decode(nil)
}

// SpecDecoder decodes a spec column's text into dst.
type SpecDecoder func(text string, dst *lifecycle.Spec) error

// ServerRow is one row of ServerCols as read, before decoding. It is
// comparable: a cache can key on the whole row, so that a hit is the very
// row decoded before.
type ServerRow struct {
	ID, Name, ProjectID, UserID, Spec, Desired, Phase, NodeID, Ext string
	DeployRequested, PortsAllocated                                bool
	Excluded, Attempts                                             string
	Fault, Maint, Created, Updated, PhaseSince, Deadline           sql.NullString
	DelReq, Launched                                               sql.NullString
	CreateRequestID, DeleteRequestID                               string
	Version                                                        int64
	VolumesOnNode, VolumesReleased                                 bool
	Requests                                                       string
}

// Scan reads the row's columns.
func (r *ServerRow) Scan(sc Scanner) error {
	return sc.Scan(&r.ID, &r.Name, &r.ProjectID, &r.UserID, &r.Spec, &r.Desired, &r.Phase, &r.NodeID,
		&r.Ext, &r.DeployRequested, &r.PortsAllocated, &r.Excluded, &r.Attempts, &r.Fault,
		&r.Maint, &r.Created, &r.Updated, &r.PhaseSince, &r.Deadline,
		&r.DelReq, &r.Launched, &r.CreateRequestID, &r.DeleteRequestID, &r.Version,
		&r.VolumesOnNode, &r.VolumesReleased, &r.Requests)
}

// Decode is the server the row holds, its spec decoded by decode (nil:
// json.Unmarshal).
func (r *ServerRow) Decode(decode SpecDecoder) (*lifecycle.Server, error) {
	s := lifecycle.Server{ID: r.ID, Name: r.Name, ProjectID: r.ProjectID, UserID: r.UserID, NodeID: r.NodeID,
		DeployRequested: r.DeployRequested, PortsAllocated: r.PortsAllocated,
		CreateRequestID: r.CreateRequestID, DeleteRequestID: r.DeleteRequestID, Version: r.Version,
		VolumesOnNode: r.VolumesOnNode, VolumesReleased: r.VolumesReleased}
	s.Desired, s.Phase = lifecycle.Desired(r.Desired), lifecycle.Phase(r.Phase)
	if decode == nil {
		decode = func(text string, dst *lifecycle.Spec) error { return json.Unmarshal([]byte(text), dst) }
	}
	if err := decode(r.Spec, &s.Spec); err != nil {
		return nil, fmt.Errorf("server %s: spec: %w", s.ID, err)
	}
	if r.Requests != "{}" {
		var rq serverRequests
		if err := json.Unmarshal([]byte(r.Requests), &rq); err != nil {
			return nil, fmt.Errorf("server %s: requests: %w", s.ID, err)
		}
		s.Op, s.OpGen, s.Lock = rq.Op, rq.OpGen, rq.Lock
		s.Op.At = s.Op.At.UTC()
	}
	if r.Ext != "{}" { // the common case skips the decoder
		var e serverExt
		if err := json.Unmarshal([]byte(r.Ext), &e); err != nil {
			return nil, fmt.Errorf("server %s: ext: %w", s.ID, err)
		}
		e.to(&s)
	}
	if r.Excluded != "null" { // the common case skips the decoder
		if err := json.Unmarshal([]byte(r.Excluded), &s.Excluded); err != nil {
			return nil, fmt.Errorf("server %s: excluded: %w", s.ID, err)
		}
	}
	if r.Attempts != "null" {
		if err := json.Unmarshal([]byte(r.Attempts), &s.Attempts); err != nil {
			return nil, fmt.Errorf("server %s: attempts: %w", s.ID, err)
		}
	}
	for i := range s.Attempts {
		s.Attempts[i].At = s.Attempts[i].At.UTC()
	}
	if r.Fault.Valid {
		var f lifecycle.Fault
		if err := json.Unmarshal([]byte(r.Fault.String), &f); err != nil {
			return nil, fmt.Errorf("server %s: fault: %w", s.ID, err)
		}
		f.At = f.At.UTC()
		s.Fault = &f
		// Records from before ext's held knew a held server by its fault.
		s.Held = s.Held || (s.Phase == lifecycle.PhaseError && s.NodeID != "" && f.Reason == lifecycle.ReasonResetState)
	}
	for _, t := range []struct {
		dst *time.Time
		src sql.NullString
	}{
		{&s.MaintenanceSince, r.Maint}, {&s.CreatedAt, r.Created}, {&s.UpdatedAt, r.Updated},
		{&s.PhaseSince, r.PhaseSince}, {&s.Deadline, r.Deadline}, {&s.DeleteRequestedAt, r.DelReq},
		{&s.LaunchedAt, r.Launched},
	} {
		var err error
		if *t.dst, err = ParseTime(t.src); err != nil {
			return nil, fmt.Errorf("server %s: %w", s.ID, err)
		}
	}
	return &s, nil
}

// serverExt is the ext column: lifecycle fields no query filters on. A
// field added here needs no migration (absent reads as its zero value).
type serverExt struct {
	VolumesStrandedOn string           `json:"volumes_stranded_on,omitempty"`
	InstanceInfoOn    string           `json:"instance_info_on,omitempty"`
	CapacityWaitSince *time.Time       `json:"capacity_wait_since,omitempty"`
	OpDone            int64            `json:"op_done,omitempty"`
	OpSent            bool             `json:"op_sent,omitempty"`
	OpFallback        bool             `json:"op_fallback,omitempty"`
	StopAfterRebuild  bool             `json:"stop_after_rebuild,omitempty"`
	Cycle             lifecycle.Cycle  `json:"cycle,omitempty"`
	PowerSeen         lifecycle.Power  `json:"power_seen,omitempty"`
	Held              bool             `json:"held,omitempty"`
	DeleteFrom        lifecycle.Phase  `json:"delete_from,omitempty"`
	OpFault           *lifecycle.Fault `json:"op_fault,omitempty"`
	Nets              []string         `json:"nets,omitempty"`
	NetsSet           bool             `json:"nets_set,omitempty"`
	Detaching         []string         `json:"detaching,omitempty"`
	// Made and VolumeToken: the volumes a build makes (lifecycle/newvolumes.go).
	Made        []lifecycle.MadeVolume `json:"made,omitempty"`
	VolumeToken string                 `json:"volume_token,omitempty"`
}

// serverRequests is the requests column: what the API records besides the
// create and the delete (UpdateServer writes it, SaveServer never does).
type serverRequests struct {
	Op    lifecycle.Op   `json:"op,omitzero"`
	OpGen int64          `json:"op_gen,omitempty"`
	Lock  lifecycle.Lock `json:"lock,omitzero"`
}

// Requests is the requests column of s.
func Requests(s *lifecycle.Server) (string, error) {
	r := serverRequests{Op: s.Op, OpGen: s.OpGen, Lock: s.Lock}
	r.Op.At = r.Op.At.UTC()
	b, err := json.Marshal(r)
	return string(b), err
}

func extOf(s *lifecycle.Server) serverExt {
	e := serverExt{VolumesStrandedOn: s.VolumesStrandedOn, InstanceInfoOn: s.InstanceInfoOn, OpDone: s.OpDone, OpSent: s.OpSent, OpFallback: s.OpFallback,
		StopAfterRebuild: s.StopAfterRebuild, PowerSeen: s.PowerSeen, Held: s.Held, DeleteFrom: s.DeleteFrom, OpFault: s.OpFault,
		Nets: s.Nets, NetsSet: s.NetsSet, Detaching: s.Detaching, Cycle: s.Cycle, Made: s.Made, VolumeToken: s.VolumeToken}
	if !s.CapacityWaitSince.IsZero() {
		t := s.CapacityWaitSince.UTC()
		e.CapacityWaitSince = &t
	}
	return e
}

func (e serverExt) to(s *lifecycle.Server) {
	s.VolumesStrandedOn, s.InstanceInfoOn = e.VolumesStrandedOn, e.InstanceInfoOn
	s.OpDone, s.OpSent, s.OpFallback, s.StopAfterRebuild, s.PowerSeen = e.OpDone, e.OpSent, e.OpFallback, e.StopAfterRebuild, e.PowerSeen
	s.Held, s.DeleteFrom, s.OpFault = e.Held, e.DeleteFrom, e.OpFault
	s.Nets, s.NetsSet, s.Detaching, s.Cycle = e.Nets, e.NetsSet, e.Detaching, e.Cycle
	s.Made, s.VolumeToken = e.Made, e.VolumeToken
	if e.CapacityWaitSince != nil {
		s.CapacityWaitSince = e.CapacityWaitSince.UTC()
	}
}

// Docs holds the JSON columns SaveServer and CreateServer write.
type Docs struct {
	Ext, Excluded, Attempts string
	Fault                   any // nil or string
}

// EncodeDocs encodes the lifecycle documents of s.
func EncodeDocs(s *lifecycle.Server) (Docs, error) {
	var d Docs
	b, err := json.Marshal(extOf(s))
	if err != nil {
		return d, err
	}
	d.Ext = string(b)
	if b, err = json.Marshal(s.Excluded); err != nil {
		return d, err
	}
	d.Excluded = string(b)
	// Times inside the documents are written in UTC, so they read back
	// equal to the UTC times of the plain columns.
	var attempts []lifecycle.Attempt
	if s.Attempts != nil {
		attempts = make([]lifecycle.Attempt, len(s.Attempts))
		for i, a := range s.Attempts {
			a.At = a.At.UTC()
			attempts[i] = a
		}
	}
	if b, err = json.Marshal(attempts); err != nil {
		return d, err
	}
	d.Attempts = string(b)
	if s.Fault != nil {
		f := *s.Fault
		f.At = f.At.UTC()
		if b, err = json.Marshal(f); err != nil {
			return d, err
		}
		d.Fault = string(b)
	}
	return d, nil
}

// NeedsWork returns NeedsWork() of s for each value the stored desired may
// have. SaveServer never writes desired, so it picks the one matching the
// stored row in SQL (CASE), which keeps needs_work right even if the caller
// changed s.Desired locally.
func NeedsWork(s *lifecycle.Server) (ifDeleted, ifActive bool) {
	c := *s
	c.Desired = lifecycle.DesiredDeleted
	ifDeleted = c.NeedsWork()
	c.Desired = lifecycle.DesiredActive
	ifActive = c.NeedsWork()
	return ifDeleted, ifActive
}

// Validate checks what CreateServer needs of a server.
func Validate(s *lifecycle.Server) error {
	if s.ID == "" {
		return errors.New("server without id")
	}
	if !s.Phase.Valid() {
		return fmt.Errorf("server %s: invalid phase %q", s.ID, s.Phase)
	}
	if s.Desired != lifecycle.DesiredActive && s.Desired != lifecycle.DesiredDeleted {
		return fmt.Errorf("server %s: invalid desired state %q", s.ID, s.Desired)
	}
	return nil
}

// StatusCond is a Nova status as an SQL condition on the phase, from
// store.StatusPhases; rows in phase deleted are excluded before these
// apply (unless the listing includes deleted servers: DELETED keeps them).
func StatusCond(st string) (string, bool) {
	phases := store.StatusPhases(st)
	if phases == nil {
		return "", false
	}
	q := make([]string, len(phases))
	for i, p := range phases {
		q[i] = "'" + string(p) + "'"
	}
	return "phase IN (" + strings.Join(q, ", ") + ")", true
}

// SortExpr is the SQL of a sort field: NULL times compare as ” (before
// any time), so the marker predicate holds for them too.
var SortExpr = map[store.SortField]string{
	store.SortCreatedAt: "created_at", store.SortUpdatedAt: "COALESCE(updated_at, '')",
	store.SortLaunchedAt: "COALESCE(launched_at, '')", store.SortName: "name", store.SortID: "id",
	store.SortProjectID: "project_id", store.SortUserID: "user_id", store.SortNodeID: "node_id",
}

// SortKeys is the full order of a listing: the given keys (default
// created_at), then id in the last key's direction unless already there.
func SortKeys(sort []store.SortKey) ([]store.SortKey, error) {
	keys := []store.SortKey{{Field: store.SortCreatedAt}}
	if len(sort) > 0 {
		keys = append([]store.SortKey(nil), sort...)
	}
	hasID := false
	for _, k := range keys {
		if !k.Field.Valid() {
			return nil, fmt.Errorf("list servers: unknown sort field %q", k.Field)
		}
		hasID = hasID || k.Field == store.SortID
	}
	if !hasID {
		keys = append(keys, store.SortKey{Field: store.SortID, Desc: keys[len(keys)-1].Desc})
	}
	return keys, nil
}

// Dir is the SQL of a key's direction.
func Dir(desc bool) string {
	if desc {
		return " DESC"
	}
	return ""
}

// Binding is the ports.binding column: "" when unbound, else JSON.
func Binding(b store.Binding) (string, error) {
	if !b.Bound() {
		return "", nil
	}
	raw, err := json.Marshal(b)
	return string(raw), err
}

// ParseBinding decodes the ports.binding column.
func ParseBinding(s string) (store.Binding, error) {
	var b store.Binding
	if s == "" {
		return b, nil
	}
	err := json.Unmarshal([]byte(s), &b)
	return b, err
}

// HeldStatus reports whether status is one a held volume may have.
func HeldStatus(status string) bool {
	return status == store.VolumeReserved || status == store.VolumeInUse || status == store.VolumeDeleting ||
		status == store.VolumeDetaching || status == store.VolumeError
}

// AnyLimit reports whether a server could pass one of the limits.
func AnyLimit(l store.Limits) bool {
	for res, v := range l {
		if v >= 0 && (res == store.ResInstances || res == store.ResCores || res == store.ResRAM ||
			strings.HasPrefix(res, store.ClassPrefix)) {
			return true
		}
	}
	return false
}

// Merge overlays limits: the defaults, then the overrides.
func Merge(defaults, overrides store.Limits) store.Limits {
	out := store.Limits{}
	for k, v := range defaults {
		out[k] = v
	}
	for k, v := range overrides {
		out[k] = v
	}
	return out
}
