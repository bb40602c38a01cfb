package reconciler_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/reconciler"
	"github.com/ingot-dev/ingot/internal/store"
)

// portWrites counts the port writes of the store under it.
type portWrites struct {
	store.Store
	creates, binds atomic.Int32
}

func (w *portWrites) CreatePort(ctx context.Context, p store.Port) error {
	w.creates.Add(1)
	return w.Store.CreatePort(ctx, p)
}

func (w *portWrites) BindPort(ctx context.Context, id, node, mac string, b store.Binding) error {
	w.binds.Add(1)
	return w.Store.BindPort(ctx, id, node, mac, b)
}

// TestBuildWritesEachPortOnce: with the embedded IPAM a build's port is
// written once, already bound to the node's NIC and naming the VIF's node
// (so cleanup finds it before the attach), not created and then bound.
func TestBuildWritesEachPortOnce(t *testing.T) {
	var w *portWrites
	r := newRigOver(t, 1, 0, reconciler.Config{}, func(st store.Store) store.Store {
		w = &portWrites{Store: st}
		return w
	})
	id := r.create(1)[0]
	s := r.settle(id)
	if s.Phase != lifecycle.PhaseActive {
		t.Fatalf("phase %s", s.Phase)
	}
	if c, b := w.creates.Load(), w.binds.Load(); c != 1 || b != 0 {
		t.Fatalf("port writes: %d creates, %d binds; want 1 create, no bind", c, b)
	}
	ports, err := r.st.Ports(t.Context(), id)
	if err != nil || len(ports) != 1 {
		t.Fatalf("ports %+v %v", ports, err)
	}
	if p := ports[0]; p.VIFNode != s.NodeID || p.Binding.PortUUID == "" || p.MAC == "" {
		t.Fatalf("port %+v on node %s", p, s.NodeID)
	}
}

// TestBuildPatchesTheNodeOnce: a build's only PATCH is the reservation's,
// which carries instance_info too; the deploy sends its PUT alone.
func TestBuildPatchesTheNodeOnce(t *testing.T) {
	r := newRig(t, 1, 0, reconciler.Config{})
	id := r.create(1)[0]
	r.takeCalls()
	if s := r.settle(id); s.Phase != lifecycle.PhaseActive {
		t.Fatalf("phase %s", s.Phase)
	}
	var patches, puts int
	for _, c := range r.takeCalls() {
		switch {
		case strings.HasPrefix(c, "PATCH /v1/nodes/"):
			patches++
		case strings.HasPrefix(c, "PUT /v1/nodes/") && strings.Contains(c, "/states/provision"):
			puts++
		}
	}
	if patches != 1 || puts != 1 {
		t.Fatalf("%d PATCHes and %d provision PUTs, want 1 and 1", patches, puts)
	}
}

// TestNotificationWakesAtOnce: a notification about a quiet server's node
// makes its step due at once, not after NotifyDebounce; another within the
// debounce waits for its end.
func TestNotificationWakesAtOnce(t *testing.T) {
	ctx := t.Context()
	r := newRig(t, 1, 0, reconciler.Config{})
	id := r.create(1)[0]
	for range 20 {
		if r.tick(); r.server(id).Phase == lifecycle.PhaseDeploying {
			break
		}
		r.clk.Advance(100 * time.Millisecond)
	}
	if p := r.server(id).Phase; p != lifecycle.PhaseDeploying {
		t.Fatalf("phase %s, want deploying", p)
	}
	for r.rec.RunDue(ctx) > 0 { // whatever is due now, so that only the wake is left
	}
	node := r.server(id).NodeID
	if !r.rec.Notified(node, nil, reconciler.ChangeState) {
		t.Fatal("the notification woke nothing")
	}
	if n := r.rec.RunDue(ctx); n != 1 {
		t.Fatalf("%d items due right after the notification, want the server's", n)
	}
	r.rec.Notified(node, nil, reconciler.ChangeState)
	if n := r.rec.RunDue(ctx); n != 0 {
		t.Fatalf("%d items due at once after a second notification within the debounce, want none", n)
	}
	r.clk.Advance(reconciler.DefaultNotifyDebounce)
	if n := r.rec.RunDue(ctx); n != 1 {
		t.Fatalf("%d items due at the debounce's end, want the server's", n)
	}
}
