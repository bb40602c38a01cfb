package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// testConcurrency: 8 workers each drive their own server through saves
// (re-reading on ErrConflict) while the API deletes those same servers and
// readers list; any error but ErrConflict (SQLITE_BUSY, a deadlock, a lost
// write) fails.
func testConcurrency(t *testing.T, st store.Store) {
	const (
		servers = 8
		saves   = 25
	)
	build := []lifecycle.Phase{lifecycle.PhasePending, lifecycle.PhaseReserving, lifecycle.PhaseNetworking, lifecycle.PhaseDeploying}
	for i := range servers {
		mustCreate(t, st, MinimalServer(fmt.Sprintf("s%d", i), T0))
	}
	var (
		wg        sync.WaitGroup
		done      atomic.Bool
		conflicts atomic.Int64
	)
	c := ctx(t)
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for !done.Load() {
				if _, err := st.ListServers(c, store.ListOptions{Limit: 5}); err != nil {
					t.Errorf("ListServers: %v", err)
					return
				}
				if _, err := st.ServersNeedingWork(c); err != nil {
					t.Errorf("ServersNeedingWork: %v", err)
					return
				}
			}
		})
	}
	for i := range servers {
		id := fmt.Sprintf("s%d", i)
		wg.Go(func() { // worker
			for n := range saves {
				for {
					s, err := st.GetServer(c, id)
					if err != nil {
						t.Errorf("GetServer(%s): %v", id, err)
						return
					}
					s.Phase = build[n%len(build)]
					s.UpdatedAt = T0.Add(time.Duration(n) * time.Second)
					err = st.SaveServer(c, s, lifecycle.Event{RequestID: s.CreateRequestID,
						Action: lifecycle.ActionCreate, Name: fmt.Sprintf("step-%d", n), Start: s.UpdatedAt})
					if errors.Is(err, store.ErrConflict) {
						conflicts.Add(1)
						continue
					}
					if err != nil {
						t.Errorf("SaveServer(%s): %v", id, err)
						return
					}
					break
				}
			}
		})
		wg.Go(func() { // API delete, twice (idempotent), at a random point
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			for range 2 {
				if err := st.RequestDelete(c, id, "req-del-"+id, T0.Add(time.Hour)); err != nil {
					t.Errorf("RequestDelete(%s): %v", id, err)
				}
			}
		})
	}
	wg.Wait()
	done.Store(true)
	readers.Wait()
	if t.Failed() {
		return
	}
	for i := range servers {
		id := fmt.Sprintf("s%d", i)
		s := mustGet(t, st, id)
		if s.Desired != lifecycle.DesiredDeleted || s.DeleteRequestID != "req-del-"+id {
			t.Errorf("%s: delete lost: %s", id, dump(s))
		}
		if want := int64(1 + saves + 1); s.Version != want {
			t.Errorf("%s: version %d, want %d (create + %d saves + 1 delete)", id, s.Version, want, saves)
		}
		evs, err := st.AllEvents(c, id)
		if err != nil || len(evs) != saves {
			t.Errorf("%s: %d events (%v), want %d", id, len(evs), err, saves)
		}
		acts, err := st.Actions(c, id)
		if err != nil || len(acts) != 2 {
			t.Errorf("%s: actions %+v (%v), want create and delete", id, acts, err)
		}
	}
	t.Logf("%d conflicts retried", conflicts.Load())
}
