package store

import (
	"context"
	"time"
)

// AggregateAZKey is the metadata key that holds an aggregate's
// availability zone, as in Nova (the zone is not a column of its own).
const AggregateAZKey = "availability_zone"

// Aggregate is an os-aggregates host aggregate: a named set of compute
// service hosts with metadata. ingot records aggregates; its scheduler does
// not read them.
type Aggregate struct {
	ID        int64  // Nova's integer id, assigned by CreateAggregate
	UUID      string // shown from 2.41
	Name      string
	Metadata  map[string]string // never nil; AggregateAZKey is its zone
	Hosts     []string          // ordered by host
	CreatedAt time.Time
	UpdatedAt *time.Time // nil until the first change
}

// Aggregates keeps the host aggregates and their hosts.
type Aggregates interface {
	// CreateAggregate inserts a (its ID is assigned; Hosts is ignored) and
	// returns the stored row. ErrExists when the name is taken.
	CreateAggregate(ctx context.Context, a Aggregate) (Aggregate, error)
	// GetAggregate returns one aggregate. ErrNotFound when unknown.
	GetAggregate(ctx context.Context, id int64) (Aggregate, error)
	// ListAggregates lists the aggregates ordered by id.
	ListAggregates(ctx context.Context) ([]Aggregate, error)
	// UpdateAggregate renames the aggregate (name non-nil) and merges meta
	// into its metadata (a nil value removes the key), setting updated_at
	// to at. ErrNotFound when unknown, ErrExists when the name is taken.
	UpdateAggregate(ctx context.Context, id int64, name *string, meta map[string]*string, at time.Time) (Aggregate, error)
	// DeleteAggregate removes an aggregate without hosts. ErrNotFound when
	// unknown, ErrConflict when it still has hosts (checked in the same
	// transaction).
	DeleteAggregate(ctx context.Context, id int64) error
	// AddAggregateHost adds host to the aggregate. ErrNotFound when the
	// aggregate is unknown, ErrExists when host is in it already.
	AddAggregateHost(ctx context.Context, id int64, host string, at time.Time) (Aggregate, error)
	// RemoveAggregateHost removes host from the aggregate. ErrNotFound
	// when the aggregate is unknown or host is not in it.
	RemoveAggregateHost(ctx context.Context, id int64, host string, at time.Time) (Aggregate, error)
}
