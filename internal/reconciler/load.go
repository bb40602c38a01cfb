package reconciler

import (
	"context"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// loadWork returns every server needing work, as ServersNeedingWork does
// (of the shards this replica holds, when it shares the servers by
// leases: the store selects them by their stored shard hash), decoding only the records that changed since the last tick read them
// when the store is a store.WorkLister: a record whose version is the one
// read before is the same record (every write of a server row bumps its
// version), so the copy kept from then is handed out again. The
// reconciler's own saves bump the version too, so a record it changed is
// read back from the store, never taken from what it meant to write.
// Each tick gets clones: nothing it does can alter the kept copies.
func (r *Reconciler) loadWork(ctx context.Context) ([]*lifecycle.Server, error) {
	wl, ok := r.store.(store.WorkLister)
	if !ok {
		return r.store.ServersNeedingWork(ctx)
	}
	vs, err := wl.NeedsWorkVersions(ctx, r.heldShards())
	if err != nil {
		return nil, err
	}
	kept := make(map[string]*lifecycle.Server, len(vs))
	var miss []string
	for _, v := range vs {
		if c, ok := r.loaded[v.ID]; ok && c.Version == v.Version {
			kept[v.ID] = c
		} else {
			miss = append(miss, v.ID)
		}
	}
	fresh, err := wl.ServersByID(ctx, miss)
	if err != nil {
		return nil, err
	}
	for _, s := range fresh {
		kept[s.ID] = s
	}
	r.loaded = kept
	out := make([]*lifecycle.Server, 0, len(vs))
	for _, v := range vs {
		if s, ok := kept[v.ID]; ok && s.NeedsWork() {
			out = append(out, s.Clone())
		}
	}
	return out, nil
}

// heldShards are the shards whose servers loadWork reads: those held now
// (owned filters again, as leases may be lost meanwhile); every shard
// without leases.
func (r *Reconciler) heldShards() store.Shards {
	if r.leases == nil {
		return store.Shards{}
	}
	st := r.leases.Status()
	sh := store.Shards{N: st.Shards, Held: make([]int, len(st.Held))}
	for i, h := range st.Held {
		sh.Held[i] = h.Shard
	}
	return sh
}
