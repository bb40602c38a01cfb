package adopt

import (
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/neutron"
)

// TestUserGiven: only a port created after the server and before any
// interface attach counts as Nova's own (deleted with the server); in
// doubt a port is the user's (kept).
func TestUserGiven(t *testing.T) {
	created := time.Date(2026, 12, 2, 17, 0, 0, 0, time.UTC)
	attach := created.Add(time.Hour)
	for _, c := range []struct {
		name, portCreated string
		attach            time.Time
		want              bool
	}{
		{"made at the boot", "2026-12-02T17:00:03Z", time.Time{}, false},
		{"made before the boot", "2026-12-02T16:59:00Z", time.Time{}, true},
		{"same second as the server", "2026-12-02T17:00:00Z", time.Time{}, true},
		{"made at the boot, attach later", "2026-12-02T17:00:03Z", attach, false},
		{"after an interface attach began", "2026-12-02T18:00:00Z", attach, true},
		{"unknown age", "", time.Time{}, true},
	} {
		if got := userGiven(created, c.attach)(neutron.Port{CreatedAt: c.portCreated}); got != c.want {
			t.Errorf("%s: user's %v, want %v", c.name, got, c.want)
		}
	}
	if !userGiven(time.Time{}, time.Time{})(neutron.Port{CreatedAt: "2026-12-02T17:00:03Z"}) {
		t.Error("a server of unknown age: its ports must count as the user's")
	}
}
