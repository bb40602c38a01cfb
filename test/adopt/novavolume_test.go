package adopt

import (
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/cindertest"
	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// TestAdoptFromNovaWithVolume: a server the real Nova booted from a real
// Cinder volume on the real Ironic (cinder storage interface, the node's
// iqn connector) is adopted once nova-compute is retired: the dry run
// lists the volume with Nova's attachment and Ironic's target, ingot then
// shows it as Nova did (os-extended-volumes:volumes_attached,
// os-volume_attachments), and ingot's delete leaves no attachment and no
// target, the volume available and the node available.
func TestAdoptFromNovaWithVolume(t *testing.T) {
	begin := time.Now()
	w := startNovaWith(t, 1, func(ks *keystonetest.Env) *cindertest.Env { return cindertest.StartWith(t, ks) })
	t.Logf("stack up in %s (Nova %s of it)", time.Since(begin).Round(time.Second), w.nv.SetupTime.Round(time.Second))
	node := w.nodes[0]
	// The connector an operator gives a node that boots from iSCSI: Nova
	// sends it to Cinder as the initiator.
	iqn := "iqn.2026-12.test.nova:" + node
	if r := w.ir.Request(t, "POST", "/v1/volume/connectors", map[string]any{
		"node_uuid": node, "type": "iqn", "connector_id": iqn}); r.Status != http.StatusCreated {
		t.Fatalf("volume connector: %d %s", r.Status, r.Body)
	}
	vol := w.bootVolume(t)
	boot := time.Now()
	var created struct {
		Server struct{ ID string } `json:"server"`
	}
	w.nv.Do(t, w.member, "POST", "/servers", map[string]any{"server": map[string]any{
		"name": "vol", "flavorRef": w.flavor, "networks": "none",
		"block_device_mapping_v2": []map[string]any{{"uuid": vol, "source_type": "volume",
			"destination_type": "volume", "boot_index": 0, "delete_on_termination": false}}}}, &created)
	id := created.Server.ID
	// Fake hardware stays off after a deploy: Nova's power sync stops it.
	// It stays off: Ironic's cinder interface attaches on a power on and
	// detaches on a power off by its own calls, which this test leaves out.
	w.nv.WaitStatus(t, w.member, id, "SHUTOFF", 5*time.Minute)
	t.Logf("booted from volume %s by Nova and stopped by its power sync in %s", vol, time.Since(boot).Round(time.Second))

	att := w.attachmentOf(t, vol, id)
	tgts := w.ir.ListVolumeTargets(t, node)
	if len(tgts) != 1 || tgts[0]["volume_id"] != vol || tgts[0]["boot_index"] != float64(0) {
		t.Fatalf("Nova's volume targets on node %s: %v", node, tgts)
	}
	tgt, _ := tgts[0]["uuid"].(string)
	attsBefore, tgtsBefore := w.volumeCounts(t, id, node)
	t.Logf("before: %d Cinder attachments of the server (%s), %d volume targets on the node (%s)", attsBefore, att, tgtsBefore, tgt)

	bin := buildBinary(t)
	config := novaConfig(t, w.ks, w.ir.URL)
	appendConfig(t, config, "volume:\n  backend: cinder\n")
	w.nv.RetireCompute(t, 2*time.Minute)
	nova := w.showRaw(t, w.nv.URL, id)

	t.Run("dry run lists the volume", func(t *testing.T) {
		out, ee := runAdoptFrom(t, "--from-nova", bin, config, nil, "--dry-run")
		t.Logf("dry run:\n%s", out)
		if a, _, r := summary(t, out); ee != nil || a != 1 || r != 0 {
			t.Fatalf("dry run: %v, %d would adopt, %d refused, want 1 and 0", ee, a, r)
		}
		want := fmt.Sprintf("%s boot_index 0 attachment %s target %s (detached, kept, when the server goes)", vol, att, tgt)
		if !strings.Contains(out, want) {
			t.Errorf("the dry run does not list %q", want)
		}
	})
	t.Run("adopt", func(t *testing.T) {
		start := time.Now()
		out, ee := runAdoptFrom(t, "--from-nova", bin, config, nil)
		if a, _, r := summary(t, out); ee != nil || a != 1 || r != 0 {
			t.Fatalf("adopt: %v, %d adopted, %d refused, want 1 and 0\n%s", ee, a, r, out)
		}
		t.Logf("adopted in %s:\n%s", time.Since(start).Round(time.Millisecond), out)
	})
	if t.Failed() {
		return
	}

	p := ingottest.Serve(t, bin, config, ingottest.Options{})
	api := p.API + "/v2.1"
	t.Run("shown as Nova showed it", func(t *testing.T) {
		ingot := w.showRaw(t, api, id)
		const key = "os-extended-volumes:volumes_attached"
		if !reflect.DeepEqual(ingot[key], nova[key]) || nova[key] == nil {
			t.Errorf("%s: ingot %v, Nova %v", key, js(ingot[key]), js(nova[key]))
		}
		for _, d := range diffServer(nova, ingot) {
			t.Errorf("%s", d)
		}
		var list struct {
			Attachments []struct {
				VolumeID string `json:"volumeId"`
				ServerID string `json:"serverId"`
			} `json:"volumeAttachments"`
		}
		w.call(t, api, "GET", "/servers/"+id+"/os-volume_attachments", nil, &list)
		if len(list.Attachments) != 1 || list.Attachments[0].VolumeID != vol || list.Attachments[0].ServerID != id {
			t.Errorf("os-volume_attachments: %+v, want volume %s of server %s", list.Attachments, vol, id)
		}
	})
	t.Run("delete", func(t *testing.T) {
		start := time.Now()
		w.call(t, api, "DELETE", "/servers/"+id, nil, nil)
		poll.Until(t, 3*time.Minute, "server "+id+" gone, its attachment and target with it", func() (bool, string) {
			n := w.ir.GetNode(t, node)
			atts, tg := w.volumeCounts(t, id, node)
			st := w.volumeStatus(t, vol)
			return n["provision_state"] == "available" && n["instance_uuid"] == nil && atts == 0 && tg == 0 && st == "available",
				fmt.Sprintf("node %v instance %v, %d attachments, %d targets, volume %s", n["provision_state"], n["instance_uuid"], atts, tg, st)
		})
		attsAfter, tgtsAfter := w.volumeCounts(t, id, node)
		t.Logf("deleted by ingot in %s; after: %d attachments, %d volume targets, volume %s",
			time.Since(start).Round(time.Millisecond), attsAfter, tgtsAfter, w.volumeStatus(t, vol))
		if attsBefore != 1 || tgtsBefore != 1 {
			t.Errorf("before: %d attachments, %d targets, want 1 and 1", attsBefore, tgtsBefore)
		}
	})
	t.Logf("TestAdoptFromNovaWithVolume took %s", time.Since(begin).Round(time.Second))
}

// bootVolume creates a bootable 1 GiB volume as member-a and waits until
// it is available.
func (w *novaWorld) bootVolume(t *testing.T) string {
	t.Helper()
	var v struct {
		Volume struct{ ID string } `json:"volume"`
	}
	if st := w.cin.Do(t, w.member, http.MethodPost, "/volumes", map[string]any{"volume": map[string]any{"size": 1, "name": "root"}}, &v); st != http.StatusAccepted {
		t.Fatalf("create volume: %d", st)
	}
	id := v.Volume.ID
	poll.Until(t, time.Minute, "volume "+id+" available", func() (bool, string) {
		st := w.volumeStatus(t, id)
		if st == "error" {
			t.Fatalf("volume %s went to error", id)
		}
		return st == "available", st
	})
	act := map[string]any{"os-set_bootable": map[string]any{"bootable": true}}
	if st := w.cin.Do(t, w.member, http.MethodPost, "/volumes/"+id+"/action", act, nil); st != http.StatusOK {
		t.Fatalf("set bootable: %d", st)
	}
	return id
}

// volumeStatus is the volume's status as member-a sees it ("gone" once
// deleted).
func (w *novaWorld) volumeStatus(t *testing.T, id string) string {
	t.Helper()
	var v struct {
		Volume struct{ Status string } `json:"volume"`
	}
	if st := w.cin.Do(t, w.member, http.MethodGet, "/volumes/"+id, nil, &v); st == http.StatusNotFound {
		return "gone"
	}
	return v.Volume.Status
}

// cinderAttachment is one of Cinder's attachment summaries.
type cinderAttachment struct {
	ID       string `json:"id"`
	VolumeID string `json:"volume_id"`
	Instance string `json:"instance"`
	Status   string `json:"status"`
}

// attachments are the server's Cinder attachments, every project's.
func (w *novaWorld) attachments(t *testing.T, server string) []cinderAttachment {
	t.Helper()
	var as struct {
		Attachments []cinderAttachment `json:"attachments"`
	}
	if st := w.cin.Do(t, w.ks.Token(t, "admin"), http.MethodGet, "/attachments?all_tenants=1", nil, &as); st != http.StatusOK {
		t.Fatalf("GET /attachments: %d", st)
	}
	var out []cinderAttachment
	for _, a := range as.Attachments {
		if a.Instance == server {
			out = append(out, a)
		}
	}
	return out
}

// attachmentOf is the id of the one attached attachment of vol Nova made
// for server.
func (w *novaWorld) attachmentOf(t *testing.T, vol, server string) string {
	t.Helper()
	atts := w.attachments(t, server)
	if len(atts) != 1 || atts[0].VolumeID != vol || atts[0].Status != "attached" {
		t.Fatalf("Nova's Cinder attachments of server %s: %+v, want one of %s, attached", server, atts, vol)
	}
	return atts[0].ID
}

// volumeCounts are the server's Cinder attachments and the node's volume
// targets.
func (w *novaWorld) volumeCounts(t *testing.T, server, node string) (attachments, targets int) {
	t.Helper()
	return len(w.attachments(t, server)), len(w.ir.ListVolumeTargets(t, node))
}

// appendConfig adds yaml to ingot's configuration file.
func appendConfig(t *testing.T, path, yaml string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(yaml); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
