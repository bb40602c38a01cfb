package scenario

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// A multiple create (min_count 3) makes three servers that each converge on
// a node of their own, with the request's admin password and their launch
// index in their config drives; then they are deleted one by one.
func TestMultipleCreateConverges(t *testing.T) {
	e := newEnv(t, envOpts{nodes: 3})
	var out struct {
		ReservationID string `json:"reservation_id"`
	}
	body := map[string]any{"server": map[string]any{"name": "web", "flavorRef": "bm.small", "imageRef": e.imgID,
		"networks": []map[string]string{{"uuid": e.netID}}, "min_count": 3, "adminPass": "Secret-pass-1",
		"return_reservation_id": true}}
	if code := e.Call("POST", "/v2.1/servers", body, &out); code != http.StatusAccepted || out.ReservationID == "" {
		t.Fatalf("create: %d %+v", code, out)
	}
	var list struct {
		Servers []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"servers"`
	}
	e.Call("GET", "/v2.1/servers?reservation_id="+out.ReservationID, nil, &list)
	if len(list.Servers) != 3 {
		t.Fatalf("servers of the reservation: %+v", list.Servers)
	}
	var ids, nodes []string
	for i, s := range list.Servers {
		if want := "web-" + string(rune('1'+i)); s.Name != want {
			t.Errorf("server %d named %q, want %q", i, s.Name, want)
		}
		ids = append(ids, s.ID)
	}
	for i, id := range ids {
		e.WaitStatus(id, "ACTIVE", 20*time.Second)
		rec := e.record(id)
		nodes = append(nodes, rec.NodeID)
		n, _ := e.sim.Node(rec.NodeID)
		cd, _ := n.InstanceInfo["configdrive"].(map[string]any)
		meta, _ := cd["meta_data"].(map[string]any)
		if meta["admin_pass"] != "Secret-pass-1" || meta["launch_index"] != float64(i) || meta["name"] != list.Servers[i].Name {
			t.Errorf("%s: meta_data admin_pass %v launch_index %v name %v", id, meta["admin_pass"], meta["launch_index"], meta["name"])
		}
	}
	slices.Sort(nodes)
	if len(slices.Compact(nodes)) != 3 {
		t.Errorf("nodes %v: want three distinct", nodes)
	}
	e.checkInvariants(ids...)
	for _, id := range ids {
		e.Delete(id)
	}
	for _, id := range ids {
		e.WaitGone(id, 10*time.Second)
	}
	e.checkInvariants(ids...)
}
