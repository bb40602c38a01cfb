package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/storetest"
)

// Writes made while one is under way share the next transaction, and each
// keeps its own outcome: the saves are written, a stale save conflicts
// alone (its row and events untouched), a fenced one is refused alone, and
// one whose context ended before its turn is not run.
func TestWritesJoinOneTransaction(t *testing.T) {
	ctx := t.Context()
	st := openTemp(t)
	defer st.Close()
	const n = 8
	servers := make([]*lifecycle.Server, n+2)
	for i := range servers {
		servers[i] = storetest.FullServer(fmt.Sprintf("s%d", i))
		if err := st.CreateServer(ctx, servers[i]); err != nil {
			t.Fatal(err)
		}
	}
	hold, held := make(chan struct{}), make(chan struct{})
	go func() {
		_ = st.write(ctx, func(txn) error { close(held); <-hold; return nil })
	}()
	<-held
	var wg sync.WaitGroup
	errs := make([]error, n+3)
	for i := range n {
		wg.Go(func() {
			s := servers[i].Clone()
			s.Phase = lifecycle.PhaseError
			errs[i] = st.SaveServer(ctx, s, lifecycle.Event{Name: "joined"})
		})
	}
	wg.Go(func() { // stale
		s := servers[n].Clone()
		s.Version = 7
		errs[n] = st.SaveServer(ctx, s, lifecycle.Event{Name: "stale"})
	})
	wg.Go(func() { // fenced under a lease nobody holds
		s := servers[n+1].Clone()
		s.Phase = lifecycle.PhaseError
		errs[n+1] = st.SaveServer(store.WithFence(ctx, store.Fence{Shard: 3, Holder: "nobody", Epoch: 9}), s)
	})
	cancelled, cancel := context.WithCancel(ctx)
	wg.Go(func() {
		errs[n+2] = st.write(cancelled, func(tx txn) error {
			_, err := tx.ExecContext(cancelled, "UPDATE servers SET name = 'cancelled'")
			return err
		})
	})
	poll.Until(t, 30*time.Second, "the writes to queue", func() (bool, string) {
		return st.writes.Waiting() == n+3, fmt.Sprintf("%d queued", st.writes.Waiting())
	})
	cancel()
	close(hold)
	wg.Wait()
	if got := st.joined.Load(); got != n+2 {
		t.Fatalf("%d writes joined another's transaction, want %d (one batch of %d)", got, n+2, n+3)
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("save %d: %v", i, errs[i])
		}
		if s, err := st.GetServer(ctx, servers[i].ID); err != nil || s.Phase != lifecycle.PhaseError {
			t.Fatalf("save %d not written: %v %v", i, s, err)
		}
	}
	if !errors.Is(errs[n], store.ErrConflict) {
		t.Fatalf("stale save: %v, want a conflict", errs[n])
	}
	if !errors.Is(errs[n+1], store.ErrFenced) {
		t.Fatalf("fenced save: %v, want fenced", errs[n+1])
	}
	if s, _ := st.GetServer(ctx, servers[n+1].ID); s.Phase == lifecycle.PhaseError {
		t.Fatal("the fenced save was written")
	}
	if !errors.Is(errs[n+2], context.Canceled) {
		t.Fatalf("cancelled write: %v", errs[n+2])
	}
	var names, events int
	st.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM servers WHERE name = 'cancelled'").Scan(&names)
	st.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM events WHERE name = 'stale'").Scan(&events)
	if names != 0 || events != 0 {
		t.Fatalf("the cancelled write renamed %d servers; the stale save recorded %d events", names, events)
	}
}
