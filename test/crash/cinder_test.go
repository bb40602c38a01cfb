package crash

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/cindertest"
	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// TestKill9Cinder: ingot with volume.backend: cinder (the real Keystone
// and Cinder, the simulated Ironic) is killed with SIGKILL around Cinder's
// attachment create — before it, and after Cinder answered but before
// ingot recorded the attachment — and at the end of the volume step;
// restarted, the build becomes ACTIVE with exactly one attachment (the
// unrecorded one found by server and volume and replaced, not doubled),
// and after the delete Cinder's attachments and the node's targets are as
// many as before: none.
func TestKill9Cinder(t *testing.T) {
	cin := cindertest.Start(t)
	ir, nodes := simSide(t, 1, "rc-cinder")
	member := cin.Keystone.Token(t, "member-a")
	for _, point := range []string{"before:cinder_attachment_create:1", "after:cinder_attachment_create:1", "after:attach_volumes:1"} {
		t.Run(strings.ReplaceAll(point, ":", "#"), func(t *testing.T) {
			in := cinderIngot(t, cin, ir, nodes, member)
			vol := cinderVolume(t, cin, member)
			a0, t0 := cinderCounts(t, cin, ir, nodes)
			p := in.run("INGOT_CRASH_AT=" + point)
			var out struct {
				Server struct{ ID string } `json:"server"`
			}
			body := map[string]any{"server": map[string]any{"name": "crash-cinder", "flavorRef": "bm", "imageRef": imageID,
				"networks":                []map[string]string{{"uuid": networkID}},
				"block_device_mapping_v2": []map[string]any{{"source_type": "volume", "destination_type": "volume", "uuid": vol}}}}
			if code, err := in.call("POST", "/v2.1/servers", body, &out); err != nil || code != http.StatusAccepted {
				t.Fatalf("create: %d %v", code, err)
			}
			if !killedBy9(t, p, ir.timeout) {
				t.Fatalf("ingot was not killed at %s", point)
			}
			a1, _ := cinderCounts(t, cin, ir, nodes)
			t.Logf("%s: killed with %d attachments in Cinder", point, a1-a0)
			in.run()
			in.waitActive(out.Server.ID)
			if a, tg := cinderCounts(t, cin, ir, nodes); a != a0+1 || tg != t0+1 {
				t.Errorf("ACTIVE after the crash at %s: %d attachments, %d targets, want 1 and 1", point, a-a0, tg-t0)
			}
			in.deleteAndCheck(out.Server.ID)
			a, tg := cinderCounts(t, cin, ir, nodes)
			t.Logf("%s: attachments %d -> %d, targets %d -> %d", point, a0, a, t0, tg)
			if a != a0 || tg != t0 {
				t.Errorf("crash at %s: attachments %d -> %d, targets %d -> %d", point, a0, a, t0, tg)
			}
		})
	}
}

// cinderIngot is an ingot on ir's nodes with volume.backend: cinder,
// called with token.
func cinderIngot(t *testing.T, cin *cindertest.Env, ir *ironicSide, nodes []string, token string) *ingot {
	t.Helper()
	in := newIngot(t, ir, "rc-cinder", nodes)
	in.token = token
	cfg, err := os.ReadFile(in.config)
	if err != nil {
		t.Fatal(err)
	}
	cfg = append(cfg, []byte("auth: {strategy: keystone, keystone: {auth_url: "+cin.Keystone.URL+
		", username: ingot, password: "+keystonetest.Password+", project_name: service}}\n"+
		"volume: {backend: cinder, cinder: {url: "+cin.URL+"}}\n")...)
	if err := os.WriteFile(in.config, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// TestKill9CinderAttach: ingot killed with SIGKILL around the Cinder
// attachment create of a volume attached after the build (os-volume_attachments
// POST) — before it, after Cinder answered but before ingot recorded it,
// and after the whole attach; restarted, the attach ends with exactly one
// attachment and one target, the volume in-use, and after the delete
// Cinder's attachments and the node's targets are as many as before.
func TestKill9CinderAttach(t *testing.T) {
	cin := cindertest.Start(t)
	ir, nodes := simSide(t, 1, "rc-cinder")
	member := cin.Keystone.Token(t, "member-a")
	for _, point := range []string{"before:cinder_attach_volume_create:1", "after:cinder_attach_volume_create:1", "after:attach_volume:1"} {
		t.Run(strings.ReplaceAll(point, ":", "#"), func(t *testing.T) {
			in := cinderIngot(t, cin, ir, nodes, member)
			vol := cinderVolume(t, cin, member)
			a0, t0 := cinderCounts(t, cin, ir, nodes)
			p := in.run("INGOT_CRASH_AT=" + point)
			id := in.create("crash-attach")
			in.waitActive(id)
			body := map[string]any{"volumeAttachment": map[string]any{"volumeId": vol}}
			if code, err := in.call("POST", "/v2.1/servers/"+id+"/os-volume_attachments", body, nil); err != nil || code != http.StatusOK {
				t.Fatalf("attach: %d %v", code, err)
			}
			if !killedBy9(t, p, ir.timeout) {
				t.Fatalf("ingot was not killed at %s", point)
			}
			a1, _ := cinderCounts(t, cin, ir, nodes)
			t.Logf("%s: killed with %d attachments in Cinder", point, a1-a0)
			in.run()
			poll.Until(t, ir.timeout, "volume in-use", func() (bool, string) {
				var v struct {
					Volume struct{ Status string } `json:"volume"`
				}
				cin.Do(t, member, http.MethodGet, "/volumes/"+vol, nil, &v)
				return v.Volume.Status == "in-use", v.Volume.Status
			})
			if a, tg := cinderCounts(t, cin, ir, nodes); a != a0+1 || tg != t0+1 {
				t.Errorf("attached after the crash at %s: %d attachments, %d targets, want 1 and 1", point, a-a0, tg-t0)
			}
			in.deleteAndCheck(id)
			poll.Until(t, ir.timeout, "attachments and targets back", func() (bool, string) {
				a, tg := cinderCounts(t, cin, ir, nodes)
				return a == a0 && tg == t0, fmt.Sprintf("%d attachments, %d targets", a, tg)
			})
			a, tg := cinderCounts(t, cin, ir, nodes)
			t.Logf("%s: attachments %d -> %d, targets %d -> %d", point, a0, a, t0, tg)
		})
	}
}

// cinderVolume creates a volume as the member and waits until available.
func cinderVolume(t *testing.T, cin *cindertest.Env, token string) string {
	t.Helper()
	var v struct {
		Volume struct{ ID, Status string } `json:"volume"`
	}
	if st := cin.Do(t, token, http.MethodPost, "/volumes", map[string]any{"volume": map[string]any{"size": 1}}, &v); st != http.StatusAccepted {
		t.Fatalf("create volume: %d", st)
	}
	poll.Until(t, time.Minute, "volume available", func() (bool, string) {
		cin.Do(t, token, http.MethodGet, "/volumes/"+v.Volume.ID, nil, &v)
		return v.Volume.Status == "available", v.Volume.Status
	})
	return v.Volume.ID
}

// cinderCounts are Cinder's attachments and the volume targets on nodes.
func cinderCounts(t *testing.T, cin *cindertest.Env, ir *ironicSide, nodes []string) (attachments, targets int) {
	t.Helper()
	_, attachments = cin.Counts(t)
	for _, n := range nodes {
		var out struct {
			Targets []struct{ UUID string } `json:"targets"`
		}
		ir.get(t, "/v1/volume/targets?node="+n, &out)
		targets += len(out.Targets)
	}
	return attachments, targets
}

// TestKill9CinderMadeVolume: ingot killed with SIGKILL around Cinder's
// create of a volume a build makes (a blank→volume block device) —
// before it, after Cinder made it but before ingot recorded its id, and
// at the end of the make step; restarted, the build finds the volume by
// its name rather than making another, becomes ACTIVE on it, and after
// the delete (delete_on_termination) Cinder holds as many volumes and
// attachments as before, the nodes as many targets: nothing leaked.
func TestKill9CinderMadeVolume(t *testing.T) {
	cin := cindertest.Start(t)
	ir, nodes := simSide(t, 1, "rc-cinder")
	member := cin.Keystone.Token(t, "member-a")
	for _, point := range []string{"before:volume-made:1", "after:volume-made:1", "after:create_volume:1"} {
		t.Run(strings.ReplaceAll(point, ":", "#"), func(t *testing.T) {
			in := cinderIngot(t, cin, ir, nodes, member)
			v0, _ := cin.Counts(t)
			a0, t0 := cinderCounts(t, cin, ir, nodes)
			p := in.run("INGOT_CRASH_AT=" + point)
			id := in.createMadeKilled(t, p, ir, point)
			v1, _ := cin.Counts(t)
			t.Logf("%s: killed with %d volumes made in Cinder", point, v1-v0)
			in.run()
			in.waitActive(id)
			if v, _ := cin.Counts(t); v != v0+1 {
				t.Errorf("ACTIVE after the crash at %s: %d volumes made, want 1", point, v-v0)
			}
			if a, tg := cinderCounts(t, cin, ir, nodes); a != a0+1 || tg != t0+1 {
				t.Errorf("ACTIVE after the crash at %s: %d attachments, %d targets, want 1 and 1", point, a-a0, tg-t0)
			}
			in.deleteAndCheck(id)
			poll.Until(t, time.Minute, "the made volume deleted", func() (bool, string) {
				v, _ := cin.Counts(t)
				return v == v0, fmt.Sprintf("%d volumes, want %d", v, v0)
			})
			if a, tg := cinderCounts(t, cin, ir, nodes); a != a0 || tg != t0 {
				t.Errorf("crash at %s: attachments %d -> %d, targets %d -> %d", point, a0, a, t0, tg)
			}
		})
	}
}

// TestKill9MadeVolumeEmbedded: the same crash points with the embedded
// registry (the simulated Ironic): killed after the registry made the
// volume at its pre-chosen id and before ingot recorded it, restarted,
// the build finds it there, becomes ACTIVE on one volume, and the delete
// (delete_on_termination) leaves the registry as it was.
func TestKill9MadeVolumeEmbedded(t *testing.T) {
	ir, nodes := simSide(t, 1, "rc-made")
	for _, point := range []string{"after:volume-made:1", "after:create_volume:1"} {
		t.Run(strings.ReplaceAll(point, ":", "#"), func(t *testing.T) {
			in := newIngot(t, ir, "rc-made", nodes)
			in.run()
			v0 := in.registryVolumes(t)
			in.p.Stop()
			p := in.run("INGOT_CRASH_AT=" + point)
			id := in.createMadeKilled(t, p, ir, point)
			in.run()
			in.waitActive(id)
			if v := in.registryVolumes(t); v != v0+1 {
				t.Errorf("ACTIVE after the crash at %s: %d volumes made, want 1", point, v-v0)
			}
			if code, err := in.call("DELETE", "/v2.1/servers/"+id, nil, nil); err != nil || code != http.StatusNoContent {
				t.Fatalf("delete: %d %v", code, err)
			}
			in.waitGone(id)
			poll.Until(t, time.Minute, "the made volume deleted", func() (bool, string) {
				v := in.registryVolumes(t)
				return v == v0, fmt.Sprintf("%d volumes, want %d", v, v0)
			})
			in.checkReleased(id)
		})
	}
}

// registryVolumes counts the embedded registry's volumes.
func (in *ingot) registryVolumes(t *testing.T) int {
	t.Helper()
	var out struct {
		Volumes []struct{ ID string } `json:"volumes"`
	}
	if code, err := in.call("GET", "/volume/v3/ingot/volumes", nil, &out); err != nil || code != http.StatusOK {
		t.Fatalf("list volumes: %d %v", code, err)
	}
	return len(out.Volumes)
}

// createMadeKilled creates a server with a blank→volume data disk
// (delete_on_termination) on in, started as p to be killed at point, and
// returns its id once p died of SIGKILL.
func (in *ingot) createMadeKilled(t *testing.T, p *ingottest.Proc, ir *ironicSide, point string) string {
	t.Helper()
	var out struct {
		Server struct{ ID string } `json:"server"`
	}
	body := map[string]any{"server": map[string]any{"name": "crash-made", "flavorRef": "bm", "imageRef": imageID,
		"networks": []map[string]string{{"uuid": networkID}},
		"block_device_mapping_v2": []map[string]any{{"source_type": "blank", "destination_type": "volume", "volume_size": 1,
			"boot_index": -1, "delete_on_termination": true}}}}
	if code, err := in.call("POST", "/v2.1/servers", body, &out); err != nil || code != http.StatusAccepted {
		t.Fatalf("create: %d %v", code, err)
	}
	if !killedBy9(t, p, ir.timeout) {
		t.Fatalf("ingot was not killed at %s", point)
	}
	return out.Server.ID
}
