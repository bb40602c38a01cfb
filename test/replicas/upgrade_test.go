package replicas

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
)

// TestRollingUpgrade is the rolling upgrade of three replicas from the
// previous release (ingottest.PreviousRelease, built from this
// repository's history) to this one during a burst of creates: each old
// replica is stopped and this release started in its place with --migrate
// (the first one applies this release's migrations, which are additive, so
// the old replicas still running go on with the new schema: docs/DESIGN.md,
// "Upgrades"). Every create is answered 202, every build ends ACTIVE on its
// own node, and the database ends at this release's schema.
func TestRollingUpgrade(t *testing.T) {
	old := ingottest.BinaryOf(t, ingottest.PreviousRelease)
	cur := ingottest.Binary(t)
	c := newClusterOf(t, old, 400, 3, 200*time.Millisecond)
	ids, handoff := c.roll("upgrade", func(r *replica) { r.bin, r.migrate = cur, true })
	if t.Failed() {
		return
	}
	out, err := exec.Command(cur, "db", "migrate", "--check", "--config", c.reps[0].config).CombinedOutput()
	if err != nil {
		t.Fatalf("after the upgrade, db migrate --check: %v\n%s", err, out)
	}
	t.Logf("rolling upgrade %s → %s during %d creates: every create answered 202, all ACTIVE; hand-overs %v; %s",
		version(t, old), version(t, cur), len(ids), handoff, strings.TrimSpace(string(out)))
}

func version(t *testing.T, bin string) string {
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	return strings.TrimSpace(string(out))
}
