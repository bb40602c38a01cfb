package scenario

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// vol creates a 10 GB volume and remembers it for checkVolumes.
func (e *env) vol(name string) string {
	e.t.Helper()
	id := e.Volume(name, 10)
	e.vols = append(e.vols, id)
	return id
}

// createWithVolumes boots from one volume and attaches another.
func (e *env) createWithVolumes(name, boot, data string, deleteOnTermination bool) string {
	e.t.Helper()
	return e.Create(map[string]any{"name": name, "flavorRef": "bm.small", "imageRef": e.imgID,
		"networks": []map[string]string{{"uuid": e.netID}},
		"block_device_mapping_v2": []map[string]any{
			{"source_type": "volume", "destination_type": "volume", "uuid": boot, "boot_index": 0, "delete_on_termination": deleteOnTermination},
			{"source_type": "volume", "destination_type": "volume", "uuid": data, "boot_index": -1, "delete_on_termination": deleteOnTermination},
		}})
}

// targets lists every volume target Ironic holds: node -> volume ids.
func (e *env) targets() map[string][]string {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.ironS.URL+"/v1/volume/targets?detail=True", nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Targets []struct {
			NodeUUID string `json:"node_uuid"`
			VolumeID string `json:"volume_id"`
		} `json:"targets"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		e.t.Fatal(err)
	}
	out := map[string][]string{}
	for _, t := range body.Targets {
		out[t.NodeUUID] = append(out[t.NodeUUID], t.VolumeID)
	}
	return out
}

// checkVolumes extends I3 to volumes: a live server's volumes are in-use with
// a target on its node; no other server holds a volume or has a target.
func (e *env) checkVolumes(deleteOnTermination bool, ids ...string) {
	e.t.Helper()
	ctx := context.Background()
	vs, ok := e.app.Store.(interface {
		GetVolume(context.Context, string) (store.Volume, error)
	})
	if !ok {
		e.t.Fatal("store has no volume registry")
	}
	tg := e.targets()
	onNode := map[string]string{}
	for node, vols := range tg {
		for _, v := range vols {
			onNode[v] = node
		}
	}
	live := map[string]*lifecycle.Server{}
	for _, id := range ids {
		if s := e.record(id); s.Phase == lifecycle.PhaseActive {
			live[id] = s
		}
	}
	for _, vid := range e.vols {
		v, err := vs.GetVolume(ctx, vid)
		if err != nil {
			if deleteOnTermination {
				continue // deleted with its server
			}
			e.t.Errorf("volume %s: %v", vid, err)
			continue
		}
		if s, ok := live[v.ServerID]; ok {
			if v.Status != store.VolumeInUse || onNode[vid] != s.NodeID {
				e.t.Errorf("volume %s of active server %s: status %s, target on %q, want in-use on %s", vid, s.ID, v.Status, onNode[vid], s.NodeID)
			}
			continue
		}
		if v.Status != store.VolumeAvailable || v.ServerID != "" {
			e.t.Errorf("I3: volume %s is %s held by %q after its server is gone or failed", vid, v.Status, v.ServerID)
		}
		if node, ok := onNode[vid]; ok {
			e.t.Errorf("I3: volume %s still has a target on node %s", vid, node)
		}
	}
}

func TestVolumesCreateDelete(t *testing.T) {
	e := newEnv(t, envOpts{})
	boot, data := e.vol("boot"), e.vol("data")
	id := e.createWithVolumes("vol1", boot, data, false)
	e.WaitStatus(id, "ACTIVE", 10*time.Second)
	e.checkInvariants(id)
	e.checkVolumes(false, id)
	node := e.record(id).NodeID
	if n, _ := e.sim.Node(node); n.StorageInterface != "external" {
		t.Errorf("boot from volume: storage_interface %q, want external", n.StorageInterface)
	}
	e.Delete(id)
	e.WaitGone(id, 10*time.Second)
	e.checkInvariants(id)
	e.checkVolumes(false, id)
}

func TestVolumesDeleteOnTermination(t *testing.T) {
	e := newEnv(t, envOpts{})
	boot, data := e.vol("boot"), e.vol("data")
	id := e.createWithVolumes("vol2", boot, data, true)
	e.WaitStatus(id, "ACTIVE", 10*time.Second)
	e.Delete(id)
	e.WaitGone(id, 10*time.Second)
	e.checkInvariants(id)
	e.checkVolumes(true, id)
	var out map[string]any
	if code := e.Call("GET", "/volume/v3/ingot/volumes/"+boot, nil, &out); code != http.StatusNotFound {
		t.Errorf("delete_on_termination volume still there: %d", code)
	}
}

// The exit paths of docs/DESIGN.md §3 with one boot and one data volume.
func TestVolumesExitPaths(t *testing.T) {
	cases := []struct {
		name   string
		opts   envOpts
		status string
		inject func(e *env, id string)
	}{
		{"S2 delete while deploying", envOpts{}, "", func(e *env, id string) {
			e.WaitFor("wait call-back", 5*time.Second, func() bool {
				n, _ := e.sim.Node(e.record(id).NodeID)
				return n.ProvisionState == "wait call-back"
			})
			e.Delete(id)
		}},
		{"S3 node deleted, rescheduled", envOpts{}, "ACTIVE", func(e *env, id string) {
			node := e.waitCallbackNode(id)
			for _, n := range e.nodes {
				if n != node {
					_ = e.sim.ReleaseDeploy(n)
				}
			}
			_ = e.sim.DeleteOutOfBand(node)
		}},
		{"S4 torn down, no node left", envOpts{nodes: 1}, "ERROR", func(e *env, id string) {
			_ = e.sim.TeardownOutOfBand(e.waitCallbackNode(id))
		}},
		{"S5 deploy failed, exhausted", envOpts{nodes: 1}, "ERROR", func(e *env, id string) {}},
		{"S10 build timeout", envOpts{nodes: 1, buildTimeout: time.Second}, "ERROR", func(e *env, id string) {}},
		{"S12 active node deleted", envOpts{nodes: 1}, "ERROR", func(e *env, id string) {
			node := e.waitCallbackNode(id)
			_ = e.sim.ReleaseDeploy(node)
			e.WaitStatus(id, "ACTIVE", 10*time.Second)
			_ = e.sim.DeleteOutOfBand(node)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.opts)
			for _, n := range e.nodes {
				if c.name == "S5 deploy failed, exhausted" {
					_ = e.sim.FailNextDeploy(n, "boom")
				} else {
					_ = e.sim.HoldDeploy(n)
				}
			}
			boot, data := e.vol("boot"), e.vol("data")
			id := e.createWithVolumes("v", boot, data, false)
			c.inject(e, id)
			switch c.status {
			case "":
				e.WaitGone(id, 10*time.Second)
			default:
				e.WaitStatus(id, c.status, 15*time.Second)
			}
			e.checkInvariants(id)
			e.checkVolumes(false, id)
		})
	}
}

// waitCallbackNode waits for the server's deploy to sit in wait call-back.
func (e *env) waitCallbackNode(id string) string {
	e.t.Helper()
	var node string
	e.WaitFor("wait call-back", 5*time.Second, func() bool {
		s := e.record(id)
		n, _ := e.sim.Node(s.NodeID)
		node = s.NodeID
		return s.Phase == lifecycle.PhaseDeploying && n.ProvisionState == "wait call-back"
	})
	return node
}

// S13: a volume target that Ironic refuses is a reschedulable failure on that
// node; with no other node, ERROR volume_attach_failed, everything released,
// and the target that was there before is left alone (I7).
func TestVolumesTargetFails(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 1})
	node := e.nodes[0]
	body := `{"node_uuid":"` + node + `","volume_type":"iscsi","volume_id":"someone-elses","boot_index":0}`
	req, _ := http.NewRequest("POST", e.ironS.URL+"/v1/volume/targets", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("pre-existing target: %v %v", resp, err)
	}
	boot, data := e.vol("boot"), e.vol("data")
	id := e.createWithVolumes("vt", boot, data, false)
	got := e.WaitStatus(id, "ERROR", 10*time.Second)
	if got.IngotFault == nil || got.IngotFault.Reason != "volume_attach_failed" || len(got.Attempts) != 1 {
		t.Fatalf("fault %+v attempts %+v", got.IngotFault, got.Attempts)
	}
	e.checkInvariants(id)
	e.checkVolumes(false, id)
	if tg := e.targets()[node]; len(tg) != 1 || tg[0] != "someone-elses" {
		t.Errorf("I7: targets on %s are now %v", node, tg)
	}
}

// S11 with volumes: delete of an ERROR server, and of a server whose node is
// already gone — the volumes come back either way.
func TestVolumesS11(t *testing.T) {
	e := newEnv(t, envOpts{})
	boot, data := e.vol("boot"), e.vol("data")
	var out struct {
		Server struct {
			ID string `json:"id"`
		} `json:"server"`
	}
	body := map[string]any{"server": map[string]any{"name": "s11v", "flavorRef": "bm.none", "imageRef": e.imgID,
		"block_device_mapping_v2": []map[string]any{
			{"source_type": "volume", "destination_type": "volume", "uuid": boot, "boot_index": 0}}}}
	if code := e.Call("POST", "/v2.1/servers", body, &out); code != http.StatusAccepted {
		t.Fatalf("create: %d", code)
	}
	bad := out.Server.ID
	e.WaitStatus(bad, "ERROR", 5*time.Second)
	e.Delete(bad)
	e.WaitGone(bad, 5*time.Second)

	id := e.createWithVolumes("s11", boot, data, false)
	e.WaitStatus(id, "ACTIVE", 10*time.Second)
	if err := e.sim.DeleteOutOfBand(e.record(id).NodeID); err != nil {
		t.Fatal(err)
	}
	e.Delete(id)
	e.WaitGone(id, 5*time.Second)
	e.checkInvariants(bad, id)
	e.checkVolumes(false, bad, id)
}

// S8 with volumes: Ironic unreachable during the delete. The server shows
// task_state deleting at once; the volumes stay held and say why until
// Ironic answers, then come back.
func TestVolumesIronicDownDuringDelete(t *testing.T) {
	e := newEnv(t, envOpts{})
	boot, data := e.vol("boot"), e.vol("data")
	id := e.createWithVolumes("s8v", boot, data, false)
	e.WaitStatus(id, "ACTIVE", 10*time.Second)
	e.gate.down.Store(true)
	e.Delete(id)
	var vol struct {
		Volume struct {
			Status string `json:"status"`
			Reason string `json:"ingot:status_reason"`
		} `json:"volume"`
	}
	e.WaitFor("volume says why it is held", 5*time.Second, func() bool {
		e.Call("GET", "/volume/v3/ingot/volumes/"+boot, nil, &vol)
		return vol.Volume.Status == "deleting" && strings.Contains(vol.Volume.Reason, "Ironic")
	})
	e.gate.down.Store(false)
	e.WaitGone(id, 10*time.Second)
	e.checkInvariants(id)
	e.checkVolumes(false, id)
}
