package novanotify

import (
	"encoding/json"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// instanceKeys are the members of nova_object.data in Nova's sample of
// InstanceActionPayload (doc/notification_samples/common_payloads).
var instanceKeys = []string{"architecture", "availability_zone", "block_devices", "created_at", "deleted_at",
	"display_name", "display_description", "host", "host_name", "ip_addresses", "kernel_id", "key_name",
	"launched_at", "image_uuid", "metadata", "locked", "node", "os_type", "progress", "ramdisk_id",
	"reservation_id", "state", "task_state", "power_state", "tenant_id", "terminated_at", "auto_disk_config",
	"flavor", "updated_at", "user_id", "uuid", "request_id", "action_initiator_user", "action_initiator_project"}

func decode(t *testing.T, body []byte) (Message, map[string]any) {
	t.Helper()
	var m Message
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Payload struct {
			Data map[string]any `json:"nova_object.data"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	return m, raw.Payload.Data
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestPayloads: each event's payload is the Nova object it names, with
// every member of Nova's sample and the values of the record.
func TestPayloads(t *testing.T) {
	b := Builder{Host: "ingot-1", PublisherID: "nova-compute:ingot-1", Now: func() time.Time { return t0 },
		FlavorName: func(id string) string { return map[string]string{"f1": "bm.small"}[id] }}
	old := srv(lifecycle.PhaseDeploying, unlaunched)
	new := srv(lifecycle.PhaseActive, func(s *lifecycle.Server) {
		s.ProjectID, s.UserID, s.CreatedAt, s.PowerSeen = "p1", "u1", t0, lifecycle.PowerOn
		s.Spec = lifecycle.Spec{FlavorID: "f1", ImageID: "img", VCPUs: 8, RAMMB: 4096, RootGB: 10, Tags: []string{"a"}}
		s.Fault = nil
	})
	ns := b.Notices(old, new)
	if len(ns) != 2 || ns[0].EventType != Update || ns[1].EventType != CreateEnd {
		t.Fatalf("notices %+v", ns)
	}
	m, data := decode(t, ns[1].Body)
	if m.EventType != CreateEnd || m.Priority != "INFO" || m.PublisherID != "nova-compute:ingot-1" ||
		m.MessageID != ns[1].MessageID || m.Timestamp != "2026-12-02 01:00:00.000000" ||
		m.Payload.Name != "InstanceCreatePayload" || m.Payload.Namespace != "nova" {
		t.Errorf("message %+v", m)
	}
	for _, k := range append(slices.Clone(instanceKeys), "fault", "keypairs", "tags", "instance_name") {
		if _, ok := data[k]; !ok {
			t.Errorf("create.end payload lacks %s (has %v)", k, keys(data))
		}
	}
	fl := data["flavor"].(map[string]any)["nova_object.data"].(map[string]any)
	if data["uuid"] != "s" || data["tenant_id"] != "p1" || data["user_id"] != "u1" || data["host"] != "ingot-1" ||
		data["node"] != "node" || data["image_uuid"] != "img" || data["state"] != "active" || data["task_state"] != nil ||
		data["power_state"] != "running" || data["launched_at"] != "2026-12-02T01:00:00Z" || data["display_name"] != "web" ||
		fl["name"] != "bm.small" || fl["flavorid"] != "f1" || fl["vcpus"] != 8.0 || fl["memory_mb"] != 4096.0 {
		t.Errorf("create.end payload %v", data)
	}

	// The host is the node's compute host, as the API shows it.
	spread := b
	spread.HostOf = func(node string) string { return map[string]string{"node": "compute-2"}[node] }
	if _, d := decode(t, spread.Notices(old, new)[1].Body); d["host"] != "compute-2" {
		t.Errorf("host %v, want the node's compute host compute-2", d["host"])
	}

	_, upd := decode(t, ns[0].Body)
	su := upd["state_update"].(map[string]any)["nova_object.data"].(map[string]any)
	if su["old_state"] != "building" || su["state"] != "active" || su["old_task_state"] != "spawning" || su["new_task_state"] != nil {
		t.Errorf("state_update %v", su)
	}
	if _, ok := upd["fault"]; ok {
		t.Errorf("instance.update carries a fault (InstanceUpdatePayload has none)")
	}

	failed := srv(lifecycle.PhaseError, unlaunched, func(s *lifecycle.Server) {
		s.Fault = &lifecycle.Fault{Reason: lifecycle.ReasonDeployFailed, Message: "deploy failed", Step: lifecycle.StepDeploy}
	})
	ns = b.Notices(srv(lifecycle.PhaseReleasing, unlaunched), failed)
	m, data = decode(t, ns[len(ns)-1].Body)
	f, _ := data["fault"].(map[string]any)
	if m.EventType != CreateError || m.Priority != "ERROR" || ns[len(ns)-1].Priority != "ERROR" || f == nil ||
		f["nova_object.data"].(map[string]any)["exception_message"] != "deploy failed" {
		t.Errorf("create.error: %+v, fault %v", m, f)
	}
	gone := b.Notices(srv(lifecycle.PhaseDeleting, deleted), srv(lifecycle.PhaseDeleted, deleted, func(s *lifecycle.Server) { s.PhaseSince = t0 }))
	m, data = decode(t, gone[len(gone)-1].Body)
	if m.EventType != DeleteEnd || m.Payload.Name != "InstanceActionPayload" || data["terminated_at"] != "2026-12-02T01:00:00Z" ||
		data["state"] != "deleted" {
		t.Errorf("delete.end: %+v %v", m, data)
	}
	resc := b.Notices(srv(lifecycle.PhaseActive), srv(lifecycle.PhaseRescuing))
	if m, data = decode(t, resc[1].Body); m.EventType != RescueStart || m.Payload.Name != "InstanceActionRescuePayload" {
		t.Errorf("rescue.start: %+v", m)
	} else if v, ok := data["rescue_image_ref"]; !ok || v != nil {
		t.Errorf("rescue.start: rescue_image_ref %v (present %v), want null", v, ok)
	}
	att := b.Notices(srv(lifecycle.PhaseActive), srv(lifecycle.PhaseAttachingVolume, func(s *lifecycle.Server) { s.Op.VolumeID = "vol-1" }))
	if m, data = decode(t, att[0].Body); m.EventType != VolumeAttachStart || m.Payload.Name != "InstanceActionVolumePayload" ||
		m.Payload.Version != "1.5" || data["volume_id"] != "vol-1" {
		t.Errorf("volume_attach.start: %+v %v", m, data["volume_id"])
	}
	if gone[0].MessageID == gone[1].MessageID {
		t.Error("two notices share a message_id")
	}
}
