package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// timeLayout is fixed-width UTC with nanoseconds: it sorts as text in time
// order (RFC3339Nano drops trailing zeros and would not) and reads back to
// an equal time.Time.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// encTime encodes t for a nullable column: NULL for the zero time.
func encTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(timeLayout)
}

// encTimeNN encodes t for a NOT NULL column.
func encTimeNN(t time.Time) string {
	return t.UTC().Format(timeLayout)
}

func decTime(ns sql.NullString) (time.Time, error) {
	if !ns.Valid || ns.String == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(timeLayout, ns.String)
	if err != nil {
		if t2, err2 := time.Parse(time.RFC3339Nano, ns.String); err2 == nil {
			return t2.UTC(), nil
		}
		return time.Time{}, fmt.Errorf("sqlite: bad time %q: %w", ns.String, err)
	}
	return t.UTC(), nil
}

// serverCols is the column list every server query selects, in scanServer's order.
const serverCols = `id, name, project_id, user_id, spec, desired, phase, node_id,
	ext, deploy_requested, ports_allocated, excluded, attempts, fault,
	maintenance_since, created_at, updated_at, phase_since, deadline,
	delete_requested_at, launched_at, create_request_id, delete_request_id, version,
	volumes_on_node, volumes_released, requests`

type scanner interface{ Scan(dest ...any) error }

func scanServer(sc scanner) (*lifecycle.Server, error) {
	var (
		s                                             lifecycle.Server
		spec, excluded, attempts, ext, requests       string
		fault                                         sql.NullString
		maint, created, updated, phaseSince, deadline sql.NullString
		delReq, launched                              sql.NullString
		desired, phase                                string
	)
	err := sc.Scan(&s.ID, &s.Name, &s.ProjectID, &s.UserID, &spec, &desired, &phase, &s.NodeID,
		&ext, &s.DeployRequested, &s.PortsAllocated, &excluded, &attempts, &fault,
		&maint, &created, &updated, &phaseSince, &deadline,
		&delReq, &launched, &s.CreateRequestID, &s.DeleteRequestID, &s.Version,
		&s.VolumesOnNode, &s.VolumesReleased, &requests)
	if err != nil {
		return nil, err
	}
	s.Desired, s.Phase = lifecycle.Desired(desired), lifecycle.Phase(phase)
	if err := json.Unmarshal([]byte(spec), &s.Spec); err != nil {
		return nil, fmt.Errorf("sqlite: server %s: spec: %w", s.ID, err)
	}
	if requests != "{}" {
		var r serverRequests
		if err := json.Unmarshal([]byte(requests), &r); err != nil {
			return nil, fmt.Errorf("sqlite: server %s: requests: %w", s.ID, err)
		}
		s.Op, s.OpGen, s.Lock = r.Op, r.OpGen, r.Lock
		s.Op.At = s.Op.At.UTC()
	}
	if ext != "{}" { // the common case skips the decoder
		var e serverExt
		if err := json.Unmarshal([]byte(ext), &e); err != nil {
			return nil, fmt.Errorf("sqlite: server %s: ext: %w", s.ID, err)
		}
		e.to(&s)
	}
	if excluded != "null" { // the common case skips the decoder
		if err := json.Unmarshal([]byte(excluded), &s.Excluded); err != nil {
			return nil, fmt.Errorf("sqlite: server %s: excluded: %w", s.ID, err)
		}
	}
	if attempts != "null" {
		if err := json.Unmarshal([]byte(attempts), &s.Attempts); err != nil {
			return nil, fmt.Errorf("sqlite: server %s: attempts: %w", s.ID, err)
		}
	}
	for i := range s.Attempts {
		s.Attempts[i].At = s.Attempts[i].At.UTC()
	}
	if fault.Valid {
		var f lifecycle.Fault
		if err := json.Unmarshal([]byte(fault.String), &f); err != nil {
			return nil, fmt.Errorf("sqlite: server %s: fault: %w", s.ID, err)
		}
		f.At = f.At.UTC()
		s.Fault = &f
	}
	for _, t := range []struct {
		dst *time.Time
		src sql.NullString
	}{
		{&s.MaintenanceSince, maint}, {&s.CreatedAt, created}, {&s.UpdatedAt, updated},
		{&s.PhaseSince, phaseSince}, {&s.Deadline, deadline}, {&s.DeleteRequestedAt, delReq},
		{&s.LaunchedAt, launched},
	} {
		if *t.dst, err = decTime(t.src); err != nil {
			return nil, fmt.Errorf("sqlite: server %s: %w", s.ID, err)
		}
	}
	return &s, nil
}

// serverExt is the ext column: lifecycle fields no query filters on. A
// field added here needs no migration (absent reads as its zero value).
type serverExt struct {
	VolumesStrandedOn string          `json:"volumes_stranded_on,omitempty"`
	CapacityWaitSince *time.Time      `json:"capacity_wait_since,omitempty"`
	OpDone            int64           `json:"op_done,omitempty"`
	OpSent            bool            `json:"op_sent,omitempty"`
	OpFallback        bool            `json:"op_fallback,omitempty"`
	StopAfterRebuild  bool            `json:"stop_after_rebuild,omitempty"`
	PowerSeen         lifecycle.Power `json:"power_seen,omitempty"`
}

// serverRequests is the requests column: what the API records besides the
// create and the delete (UpdateServer writes it, SaveServer never does).
type serverRequests struct {
	Op    lifecycle.Op   `json:"op,omitzero"`
	OpGen int64          `json:"op_gen,omitempty"`
	Lock  lifecycle.Lock `json:"lock,omitzero"`
}

func requestsOf(s *lifecycle.Server) (string, error) {
	r := serverRequests{Op: s.Op, OpGen: s.OpGen, Lock: s.Lock}
	r.Op.At = r.Op.At.UTC()
	b, err := json.Marshal(r)
	return string(b), err
}

func extOf(s *lifecycle.Server) serverExt {
	e := serverExt{VolumesStrandedOn: s.VolumesStrandedOn, OpDone: s.OpDone, OpSent: s.OpSent, OpFallback: s.OpFallback,
		StopAfterRebuild: s.StopAfterRebuild, PowerSeen: s.PowerSeen}
	if !s.CapacityWaitSince.IsZero() {
		t := s.CapacityWaitSince.UTC()
		e.CapacityWaitSince = &t
	}
	return e
}

func (e serverExt) to(s *lifecycle.Server) {
	s.VolumesStrandedOn = e.VolumesStrandedOn
	s.OpDone, s.OpSent, s.OpFallback, s.StopAfterRebuild, s.PowerSeen = e.OpDone, e.OpSent, e.OpFallback, e.StopAfterRebuild, e.PowerSeen
	if e.CapacityWaitSince != nil {
		s.CapacityWaitSince = e.CapacityWaitSince.UTC()
	}
}

// lifecycleDocs holds the JSON columns SaveServer and CreateServer write.
type lifecycleDocs struct {
	ext, excluded, attempts string
	fault                   any // nil or string
}

func encodeDocs(s *lifecycle.Server) (lifecycleDocs, error) {
	var d lifecycleDocs
	b, err := json.Marshal(extOf(s))
	if err != nil {
		return d, err
	}
	d.ext = string(b)
	if b, err = json.Marshal(s.Excluded); err != nil {
		return d, err
	}
	d.excluded = string(b)
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
	d.attempts = string(b)
	if s.Fault != nil {
		f := *s.Fault
		f.At = f.At.UTC()
		if b, err = json.Marshal(f); err != nil {
			return d, err
		}
		d.fault = string(b)
	}
	return d, nil
}

func collectServers(rows *sql.Rows, capHint int) ([]*lifecycle.Server, error) {
	defer rows.Close()
	out := make([]*lifecycle.Server, 0, capHint)
	for rows.Next() {
		s, err := scanServer(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return out, nil
}
