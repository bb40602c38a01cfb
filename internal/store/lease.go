package store

import (
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"time"
)

// ErrFenced: a write carried a fence (WithFence) whose lease is no longer
// held — another replica took the shard (a higher epoch), or the lease
// expired. Nothing was written. See docs/DESIGN.md §2.10.
var ErrFenced = errors.New("store: lease lost (fenced)")

// Lease is one shard's lease. A replica acts on the servers of a shard only
// while it holds that shard's lease.
type Lease struct {
	Shard  int
	Holder string // replica identity (config key host); "" = never held
	// Epoch grows by one each time the lease changes hands (or is taken
	// again after it expired or was released); renewals keep it.
	Epoch     int64
	ExpiresAt time.Time // by the database's clock
}

// Fence names the lease a write is made under.
type Fence struct {
	Shard  int
	Holder string
	Epoch  int64
}

// Claim is one lease round of a replica (Leases.ClaimLeases).
type Claim struct {
	Host   string
	Shards int           // shards 0..Shards-1 exist after the claim
	TTL    time.Duration // a renewed or claimed lease expires TTL after the database's now
	// TakeOwn treats the leases Host already holds as free: a replica
	// starting under the identity of its previous run (crash, restart) takes
	// them back at once, each with a new epoch, so nothing of the previous
	// run's writes can pass a fence any more.
	TakeOwn bool
}

// Claimed is what a claim left: the leases Host holds, and how many
// replicas are live (a heartbeat within TTL, Host included).
type Claimed struct {
	Held []Lease
	Live int
}

// Leases are the shard leases of the replicas (docs/DESIGN.md §2.10). The
// database's clock decides expiry, so the replicas' clocks need not agree.
//
// Fencing: every write method of Store honours a fence put in its context
// by WithFence: in the write's own transaction it checks that the fence's
// lease is still held by its holder at its epoch and unexpired, and
// otherwise writes nothing and returns an error wrapping ErrFenced. A
// context without a fence (the API's writes) is not checked.
type Leases interface {
	// ClaimLeases runs one lease round of c.Host in one transaction: it
	// records the host's heartbeat, renews every unexpired lease the host
	// holds (expiry now+TTL, epoch kept), then takes free or expired leases
	// (holder Host, epoch+1, expiry now+TTL), lowest shard first, until the
	// host holds ceil(Shards/live). It never takes an unexpired lease of
	// another host, and never gives one up (ReleaseLeases does).
	ClaimLeases(ctx context.Context, c Claim) (Claimed, error)
	// ReleaseLeases gives up host's leases on the given shards (nil: every
	// one, and the host's heartbeat is removed, so it no longer counts as
	// live): expired at once, epoch kept, so the next claim takes them with
	// epoch+1 without waiting.
	ReleaseLeases(ctx context.Context, host string, shards []int) error
	// ListLeases lists every shard's lease, by shard.
	ListLeases(ctx context.Context) ([]Lease, error)
}

type fenceKey struct{}

// WithFence returns ctx carrying f: the store's writes under ctx are made
// only while f's lease is held (see Leases).
func WithFence(ctx context.Context, f Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

// FenceOf returns the fence ctx carries, if any.
func FenceOf(ctx context.Context) (Fence, bool) {
	f, ok := ctx.Value(fenceKey{}).(Fence)
	return f, ok
}

// ShardOf is the shard of a server among n (ShardHash of its id modulo n):
// fixed for the server's life as long as the shard count is.
func ShardOf(serverID string, n int) int {
	if n <= 1 {
		return 0
	}
	return int(ShardHash(serverID) % uint32(n))
}

// ShardHash is the FNV-1a hash of a server id that ShardOf divides. The
// stores keep it in a column written at create, so a load can select the
// servers of some shards under any shard count (hash % n).
func ShardHash(serverID string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(serverID))
	return h.Sum32()
}

// Shards selects the servers of some shards among N, for the loads a
// replica needs only for the shards it holds. The zero value selects every
// server.
type Shards struct {
	N    int   // shard count (ShardOf's n); 0: every server
	Held []int // the shards selected; none selects no server
}

// All reports whether s selects every server.
func (s Shards) All() bool { return s.N <= 0 }

// Has reports whether s selects the server.
func (s Shards) Has(serverID string) bool {
	return s.All() || slices.Contains(s.Held, ShardOf(serverID, s.N))
}

// Share is the most leases one of live replicas takes: ceil(shards/live).
func Share(shards, live int) int {
	if live < 1 {
		live = 1
	}
	return (shards + live - 1) / live
}

// Kicker is implemented by a store whose replicas can wake each other's
// loops (PostgreSQL: NOTIFY and LISTEN). An API write records desired state
// on whichever replica answered it; KickReplicas tells every replica, so the
// holder of the server's shard acts at once rather than at its next poll.
type Kicker interface {
	// KickReplicas wakes every replica listening (this one included).
	KickReplicas(ctx context.Context) error
	// ListenKicks calls fn for every kick until ctx ends.
	ListenKicks(ctx context.Context, fn func()) error
}
