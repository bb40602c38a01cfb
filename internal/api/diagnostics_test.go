package api_test

import (
	"net/http"
	"testing"
)

func TestServerDiagnostics(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("vm1")
	f.doWith(member, "GET", "/v2.1/servers/"+id+"/diagnostics", "2.48", nil).novaError(t, 403, "forbidden")
	f.doWith(stranger, "GET", "/v2.1/servers/"+id+"/diagnostics", "2.48", nil).novaError(t, 404, "itemNotFound")
	for _, mv := range []string{"2.1", "2.48", "2.90"} {
		d := obj(t, f.doWith(otherAdmin, "GET", "/v2.1/servers/"+id+"/diagnostics", mv, nil).want(t, 200).body)
		if nics, _ := d["nic_details"].([]any); d["driver"] != "ironic" || d["config_drive"] != true || d["num_nics"] != float64(len(nics)) || d["state"] != "running" {
			t.Errorf("%s: %v", mv, d)
		}
		mem, _ := d["memory_details"].(map[string]any)
		if mem["maximum"] == nil {
			t.Errorf("%s: memory maximum missing: %v", mv, d)
		}
		want := []string{"state", "driver", "hypervisor", "hypervisor_os", "uptime", "config_drive", "num_cpus",
			"num_nics", "num_disks", "memory_details", "cpu_details", "nic_details", "disk_details"}
		if len(d) != len(want) {
			t.Errorf("%s: members %v, want exactly %v", mv, d, want)
		}
	}
	building := f.create("building")
	f.doWith(otherAdmin, "GET", "/v2.1/servers/"+building+"/diagnostics", "2.48", nil).novaError(t, 409, "conflictingRequest")
}

func TestExternalEvents(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("vm1")
	building := f.create("building")
	ev := func(name, server string) map[string]any { return map[string]any{"name": name, "server_uuid": server} }
	body := func(evs ...map[string]any) map[string]any { return map[string]any{"events": evs} }
	f.doWith(member, "POST", "/v2.1/os-server-external-events", "2.1", body(ev("network-changed", id))).novaError(t, 403, "forbidden")
	for _, bad := range []any{body(), body(ev("reboot-now", id)), body(ev("volume-extended", id)),
		body(map[string]any{"name": "network-changed", "server_uuid": id, "x": 1}), map[string]any{}} {
		f.doWith(otherAdmin, "POST", "/v2.1/os-server-external-events", "2.1", bad).novaError(t, 400, "badRequest")
	}
	r := f.doWith(otherAdmin, "POST", "/v2.1/os-server-external-events", "2.1", body(ev("network-changed", id))).want(t, 200)
	got := list(t, r.body, "events")
	if e := got[0].(map[string]any); e["code"] != float64(200) || e["status"] != "completed" || e["server_uuid"] != id || e["name"] != "network-changed" {
		t.Errorf("event answer %v", e)
	}
	r = f.doWith(otherAdmin, "POST", "/v2.1/os-server-external-events", "2.51",
		body(ev("volume-extended", id), ev("network-changed", building), ev("network-changed", unknownID))).want(t, http.StatusMultiStatus)
	codes := []float64{}
	for _, e := range list(t, r.body, "events") {
		codes = append(codes, e.(map[string]any)["code"].(float64))
	}
	if len(codes) != 3 || codes[0] != 200 || codes[1] != 422 || codes[2] != 404 {
		t.Errorf("codes %v, want 200 422 404", codes)
	}
	f.doWith(otherAdmin, "POST", "/v2.1/os-server-external-events", "2.1", body(ev("network-changed", unknownID))).novaError(t, 404, "itemNotFound")
}
