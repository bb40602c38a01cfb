package cindertest

import (
	"net/http"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/poll"
)

// TestStart: Start returns once the scheduler lists the volume service's
// pool (a volume scheduled before goes to error "No valid backend was
// found"; with report_interval = 2 s the API's own start-up mostly hides
// that race), a member's volume created at once becomes available, and
// the admin counts it.
func TestStart(t *testing.T) {
	e := Start(t)
	t.Logf("Keystone and Cinder up in %s (Keystone %s, db sync %s, daemons to the pool %s) at %s, pool %s, Cinder's RSS %d MiB",
		e.SetupTime.Round(time.Millisecond), e.Keystone.SetupTime.Round(time.Millisecond), e.SyncTime.Round(time.Millisecond),
		e.ReadyTime.Round(time.Millisecond), e.URL, e.Pool, e.RSS()/1024)
	var pools struct {
		Pools []struct{ Name string } `json:"pools"`
	}
	e.Do(t, e.Keystone.Token(t, "admin"), http.MethodGet, "/scheduler-stats/get_pools", nil, &pools)
	if e.Pool == "" || len(pools.Pools) != 1 || pools.Pools[0].Name != e.Pool {
		t.Fatalf("pool %q, scheduler lists %+v", e.Pool, pools.Pools)
	}
	tok := e.Keystone.Token(t, "member-a")
	var v struct {
		Volume struct{ ID, Status string } `json:"volume"`
	}
	if st := e.Do(t, tok, http.MethodPost, "/volumes", map[string]any{"volume": map[string]any{"size": 1}}, &v); st != http.StatusAccepted {
		t.Fatalf("create volume: %d", st)
	}
	poll.Until(t, time.Minute, "volume available", func() (bool, string) {
		if v.Volume.Status == "error" {
			t.Fatalf("volume %s is error", v.Volume.ID)
		}
		if v.Volume.Status == "available" {
			return true, ""
		}
		e.Do(t, tok, http.MethodGet, "/volumes/"+v.Volume.ID, nil, &v)
		return v.Volume.Status == "available", v.Volume.Status
	})
	if vols, atts := e.Counts(t); vols != 1 || atts != 0 {
		t.Fatalf("counts: %d volumes, %d attachments", vols, atts)
	}
}
