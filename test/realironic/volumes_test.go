package realironic

import (
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

func (s *stack) createBootFromVolume(name, vol string) string {
	return s.createWithVolume(name, vol, 0)
}

// createWithVolume attaches vol with the given boot index (-1: data volume).
func (s *stack) createWithVolume(name, vol string, bootIndex int) string {
	s.t.Helper()
	return s.Create(map[string]any{"name": name, "flavorRef": "bm", "imageRef": s.imgID,
		"networks": []map[string]string{{"uuid": s.netID}},
		"block_device_mapping_v2": []map[string]any{
			{"source_type": "volume", "destination_type": "volume", "uuid": vol, "boot_index": bootIndex}}})
}

func (s *stack) volumeStatus(id string) string {
	var out struct {
		Volume struct{ Status string } `json:"volume"`
	}
	s.Call("GET", "/volume/v3/ingot/volumes/"+id, nil, &out)
	return out.Volume.Status
}

func TestRealIronicVolumes(t *testing.T) {
	ir := ironictest.StartReal(t, ironictest.RealOptions{CallbackTimeout: 120 * time.Second})

	t.Run("boot from volume, then delete", func(t *testing.T) {
		s := newStack(t, ir, "rc-v1")
		node := ir.EnrollNode(t, ironictest.NodeSpec{Name: "v1", ResourceClass: "rc-v1", Kind: ironictest.Fast})
		vol := s.Volume("boot", 10)
		id := s.createBootFromVolume("v1", vol)
		s.WaitStatus(id, "ACTIVE", 60*time.Second)
		tg := ir.ListVolumeTargets(t, node)
		if len(tg) != 1 || tg[0]["volume_id"] != vol {
			t.Fatalf("targets on %s: %v", node, tg)
		}
		if got := ir.GetNode(t, node)["storage_interface"]; got != "external" {
			t.Errorf("storage_interface %v, want external", got)
		}
		if st := s.volumeStatus(vol); st != "in-use" {
			t.Errorf("volume %s, want in-use", st)
		}
		s.Call("DELETE", "/v2.1/servers/"+id, nil, nil)
		s.WaitGone(id, 60*time.Second)
		s.released(node)
		if tg := ir.ListVolumeTargets(t, node); len(tg) != 0 {
			t.Errorf("targets left: %v", tg)
		}
		s.WaitFor("volume available", 10*time.Second, func() bool { return s.volumeStatus(vol) == "available" })
	})

	t.Run("node deleted out-of-band while deploying", func(t *testing.T) {
		s := newStack(t, ir, "rc-v2")
		long := ir.EnrollNode(t, ironictest.NodeSpec{Name: "v2", ResourceClass: "rc-v2", Kind: ironictest.LongDeploy})
		// NOTE: a custom-agent deploy refuses an iSCSI boot volume ("has an
		// iSCSI boot volume defined and no iSCSI boot support available"), so
		// the long-deploy cases attach a data volume.
		vol := s.Volume("data", 10)
		id := s.createWithVolume("v2", vol, -1)
		s.waitCallback(id)
		ir.OutOfBandDelete(t, long)
		v := s.WaitStatus(id, "ERROR", 30*time.Second)
		if v.IngotFault == nil || v.IngotFault.Reason != "node_deleted" {
			t.Fatalf("fault %+v", v.IngotFault)
		}
		s.WaitFor("volume available", 10*time.Second, func() bool { return s.volumeStatus(vol) == "available" })
		s.noPorts(id)
	})

	t.Run("torn down out-of-band while deploying", func(t *testing.T) {
		s := newStack(t, ir, "rc-v3")
		long := ir.EnrollNode(t, ironictest.NodeSpec{Name: "v3", ResourceClass: "rc-v3", Kind: ironictest.LongDeploy})
		vol := s.Volume("data", 10)
		id := s.createWithVolume("v3", vol, -1)
		s.waitCallback(id)
		ir.OutOfBandTeardown(t, long)
		s.WaitStatus(id, "ERROR", 30*time.Second)
		s.released(long)
		s.WaitFor("targets removed", 30*time.Second, func() bool { return len(ir.ListVolumeTargets(t, long)) == 0 })
		s.WaitFor("volume available", 10*time.Second, func() bool { return s.volumeStatus(vol) == "available" })
	})

	t.Run("deploy refused with a boot volume, released", func(t *testing.T) {
		// Found against the real Ironic: an agent deploy with an iSCSI boot
		// volume fails at once ("no iSCSI boot support available"); the
		// release powers the node off and must not race the power lock.
		s := newStack(t, ir, "rc-v4")
		long := ir.EnrollNode(t, ironictest.NodeSpec{Name: "v4", ResourceClass: "rc-v4", Kind: ironictest.LongDeploy})
		vol := s.Volume("boot", 10)
		id := s.createBootFromVolume("v4", vol)
		v := s.WaitStatus(id, "ERROR", 60*time.Second)
		if v.IngotFault == nil || v.IngotFault.Reason != "deploy_failed" {
			t.Fatalf("fault %+v", v.IngotFault)
		}
		s.released(long)
		s.WaitFor("targets removed", 30*time.Second, func() bool { return len(ir.ListVolumeTargets(t, long)) == 0 })
		s.WaitFor("volume available", 10*time.Second, func() bool { return s.volumeStatus(vol) == "available" })
	})
}
