package crash

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/cindertest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// TestKill9CinderDetachActive: ingot killed with SIGKILL in the middle of
// a volume detach from ACTIVE — the node powered off, its volume target
// not yet deleted — and restarted: the detach goes on from the record, so
// the volume ends available with no attachment and no target left, the
// node powered on again and the server ACTIVE.
func TestKill9CinderDetachActive(t *testing.T) {
	cin := cindertest.Start(t)
	ir, nodes := simSide(t, 1, "rc-cinder")
	member := cin.Keystone.Token(t, "member-a")
	for _, point := range []string{"after:power_off:1", "before:detach_volume:1"} {
		t.Run(strings.ReplaceAll(point, ":", "#"), func(t *testing.T) {
			in := cinderIngot(t, cin, ir, nodes, member)
			vol := cinderVolume(t, cin, member)
			a0, t0 := cinderCounts(t, cin, ir, nodes)
			p := in.run("INGOT_CRASH_AT=" + point)
			id := in.create("crash-detach")
			in.waitActive(id)
			body := map[string]any{"volumeAttachment": map[string]any{"volumeId": vol}}
			if code, err := in.call("POST", "/v2.1/servers/"+id+"/os-volume_attachments", body, nil); err != nil || code != http.StatusOK {
				t.Fatalf("attach: %d %v", code, err)
			}
			waitVolume(t, cin, member, vol, "in-use", ir)
			if code, err := in.call("DELETE", "/v2.1/servers/"+id+"/os-volume_attachments/"+vol, nil, nil); err != nil || code != http.StatusAccepted {
				t.Fatalf("detach from ACTIVE: %d %v", code, err)
			}
			if !killedBy9(t, p, ir.timeout) {
				t.Fatalf("ingot was not killed at %s", point)
			}
			_, tg := cinderCounts(t, cin, ir, nodes)
			t.Logf("%s: killed with node power %q and %d target(s)", point, ir.node(t, nodes[0]).PowerState, tg-t0)
			in.run()
			waitVolume(t, cin, member, vol, "available", ir)
			poll.Until(t, ir.timeout, "server ACTIVE, node powered on", func() (bool, string) {
				s, _ := in.show(id)
				pw := ir.node(t, nodes[0]).PowerState
				return s.Status == "ACTIVE" && s.TaskState == nil && pw == "power on", fmt.Sprintf("status %q, power %q", s.Status, pw)
			})
			if a, tg := cinderCounts(t, cin, ir, nodes); a != a0 || tg != t0 {
				t.Errorf("after the crash at %s: %d attachments, %d targets left", point, a-a0, tg-t0)
			}
			in.deleteAndCheck(id)
		})
	}
}

// waitVolume waits until Cinder shows vol in status want.
func waitVolume(t *testing.T, cin *cindertest.Env, token, vol, want string, ir *ironicSide) {
	t.Helper()
	poll.Until(t, ir.timeout, "volume "+want, func() (bool, string) {
		var v struct {
			Volume struct{ Status string } `json:"volume"`
		}
		cin.Do(t, token, http.MethodGet, "/volumes/"+vol, nil, &v)
		return v.Volume.Status == want, v.Volume.Status
	})
}
