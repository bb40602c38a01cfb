package store

import (
	"context"
	"hash/fnv"
	"time"
)

// Binaries of the services each ingot replica registers: it is Nova's
// compute, scheduler and conductor in one process.
const (
	BinaryCompute   = "nova-compute"
	BinaryScheduler = "nova-scheduler"
	BinaryConductor = "nova-conductor"
)

// Service is one os-services row: a binary on a host (a replica).
type Service struct {
	ID             int64  // shown before 2.53
	UUID           string // shown from 2.53
	Host           string
	Binary         string
	Disabled       bool
	DisabledReason *string
	ForcedDown     bool
	CreatedAt      time.Time
	UpdatedAt      time.Time // the last heartbeat
}

// ServiceUpdate is what an admin changes on a service; nil members stay.
type ServiceUpdate struct {
	Disabled       *bool
	DisabledReason **string
	ForcedDown     *bool
}

// Services keeps the services and their heartbeats.
type Services interface {
	// RegisterService inserts the service (host, binary) when absent, with
	// a new UUID and the heartbeat at, or else only sets its heartbeat to
	// at (an admin's disable survives a restart, as in Nova). It returns
	// the stored row.
	RegisterService(ctx context.Context, host, binary string, at time.Time) (Service, error)
	// Heartbeat sets updated_at of every service of host to at.
	// ErrNotFound when host has none (an admin deleted them).
	Heartbeat(ctx context.Context, host string, at time.Time) error
	// ListServices lists the services ordered by id.
	ListServices(ctx context.Context) ([]Service, error)
	// UpdateService changes one service by UUID. ErrNotFound when unknown.
	UpdateService(ctx context.Context, uuid string, u ServiceUpdate) (Service, error)
	// DeleteService removes one service by UUID. ErrNotFound when unknown.
	DeleteService(ctx context.Context, uuid string) error
	// AdminRevision is a number that every committed write to the
	// services, the aggregates or their hosts changes (by any replica): what
	// was derived from them is still true while it reads the same. Read it
	// before what is derived, so the derived is never older than it.
	AdminRevision(ctx context.Context) (int64, error)
}

// ComputeServices are the nova-compute services of all, in all's order
// (by id): the hosts the Ironic nodes are spread over.
func ComputeServices(all []Service) []Service {
	var out []Service
	for _, sv := range all {
		if sv.Binary == BinaryCompute {
			out = append(out, sv)
		}
	}
	return out
}

// ServiceOfNode is the compute service a node belongs to: a stable hash of
// the node over the compute services (one replica: all of them), as Nova
// spreads Ironic nodes over its compute services with a hash ring. It is
// the node's host for the API and for the affinity policy.
func ServiceOfNode(node string, computes []Service) (Service, bool) {
	if len(computes) == 0 {
		return Service{}, false
	}
	h := fnv.New32a()
	h.Write([]byte(node))
	return computes[int(h.Sum32()%uint32(len(computes)))], true
}
