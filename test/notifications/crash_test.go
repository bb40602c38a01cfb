package notifications

import (
	"slices"
	"testing"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/ironictest"
)

// TestKill9AroundPublish: ingot is killed with SIGKILL (the crashpoints
// build) with a build's notifications saved in the outbox — before the
// publish (notify:publish) or after the broker confirmed it but before the
// outbox row is deleted (notify:confirmed). After the restart every
// notification arrives: none lost; a confirmed one may arrive again, with
// the same message_id, and only then.
func TestKill9AroundPublish(t *testing.T) {
	for _, tc := range []struct {
		point string
		dup   bool // the killed batch was confirmed: it is sent again
	}{
		{"notify:publish", false},
		{"notify:confirmed", true},
	} {
		t.Run(tc.point, func(t *testing.T) {
			bus := ironictest.NewBus(t)
			l := listen(t, bus)
			deny(t, bus) // the build's notifications wait in the outbox
			d := newDev(t, bus)
			p := d.launch("INGOT_CRASH_AT=" + tc.point).Serving()
			c := apitest.New(t, p.API)
			id := d.create(c, "crash-1")
			c.WaitStatus(id, "ACTIVE", waitLong)
			allow(t, bus) // the publisher connects, reaches the point and dies
			if !p.Exited(waitLong) {
				t.Fatalf("ingot did not reach %s", tc.point)
			}
			if before := l.of(id); !tc.dup && len(before) > 0 {
				t.Fatalf("killed before the publish, yet %v arrived", types(before))
			}

			p = d.launch().Serving()
			c = apitest.New(t, p.API)
			c.Delete(id)
			c.WaitGone(id, waitLong)
			got := l.waitFor(t, id, "instance.delete.end")
			once := distinct(got)
			if a := actions(once); !slices.Equal(a, lifeTypes) {
				t.Errorf("after the restart: %v, want %v", a, lifeTypes)
			}
			if dups := len(got) - len(once); tc.dup != (dups > 0) {
				t.Errorf("%d notifications arrived twice (%v), want some only when the kill followed the confirm", dups, types(got))
			}
			t.Logf("%s: %d received, %d distinct", tc.point, len(got), len(once))
		})
	}
}
