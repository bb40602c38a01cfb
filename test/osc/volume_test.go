package osc

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/poll"
)

// TestCLIVolumeAttach: `openstack server add volume` on an ACTIVE server
// (the volume in-use, listed by `server volume list`), `server remove
// volume` from ACTIVE (the machine powered off and on again; the volume
// available, the server ACTIVE) and, attached again, from SHUTOFF, on the
// embedded backend.
func TestCLIVolumeAttach(t *testing.T) {
	requireCLI(t)
	ctx := context.Background()
	s := startIngot(t, 1)
	cl := newCLI(t, s, "2.90", "bm-volume")
	var vol struct {
		Volume struct{ ID string } `json:"volume"`
	}
	if code, err := s.call(ctx, "POST", s.url+"/volume/v3/ingot/volumes", "", map[string]any{"volume": map[string]any{"size": 1, "name": "data-cli"}}, &vol); err != nil || code != http.StatusAccepted {
		t.Fatalf("create volume: %d %v", code, err)
	}
	status := func() string {
		var v struct {
			Volume struct{ Status string } `json:"volume"`
		}
		if _, err := s.call(ctx, "GET", s.url+"/volume/v3/ingot/volumes/"+vol.Volume.ID, "", nil, &v); err != nil {
			t.Fatal(err)
		}
		return v.Volume.Status
	}
	docs, stderr, err := cl.session(ctx, 3,
		"server create --flavor "+flavorName+" --image "+imageName+" --network "+netName+" --wait -f json vol-cli",
		"server add volume -f json vol-cli data-cli",
		"server volume list -f json vol-cli")
	if err != nil {
		t.Fatalf("session: %v\nstderr:\n%s", err, stderr)
	}
	expect(t, "add volume", asObject(t, docs[1]), map[string]any{"Volume ID": vol.Volume.ID, "Device": nil, "Delete On Termination": false})
	if l := asList(t, docs[2]); len(l) != 1 || l[0]["Volume ID"] != vol.Volume.ID {
		t.Errorf("server volume list: %v", l)
	}
	poll.Until(t, 30*time.Second, "volume in-use", func() (bool, string) { st := status(); return st == "in-use", st })

	if _, stderr, err := cl.run(ctx, "server", "remove", "volume", "vol-cli", "data-cli"); err != nil {
		t.Fatalf("remove volume from an ACTIVE server: %v\n%s", err, stderr)
	}
	poll.Until(t, 30*time.Second, "volume available", func() (bool, string) { st := status(); return st == "available", st })
	id := s.waitStatus(t, "vol-cli", "ACTIVE").ID
	poll.Until(t, 60*time.Second, "powered on again", func() (bool, string) {
		var out struct {
			Server map[string]any `json:"server"`
		}
		if _, err := s.call(ctx, "GET", s.url+"/v2.1/servers/"+id, "2.1", nil, &out); err != nil {
			t.Fatal(err)
		}
		return out.Server["status"] == "ACTIVE" && out.Server["OS-EXT-STS:power_state"] == 1.0, fmt.Sprint(out.Server["status"], out.Server["OS-EXT-STS:power_state"])
	})
	if _, stderr, err := cl.run(ctx, "server", "add", "volume", "vol-cli", "data-cli"); err != nil {
		t.Fatalf("add volume again: %v\n%s", err, stderr)
	}
	poll.Until(t, 30*time.Second, "volume in-use", func() (bool, string) { st := status(); return st == "in-use", st })
	if _, stderr, err := cl.run(ctx, "server", "stop", "vol-cli"); err != nil {
		t.Fatalf("stop: %v %s", err, stderr)
	}
	s.waitStatus(t, "vol-cli", "SHUTOFF")
	if _, stderr, err := cl.run(ctx, "server", "remove", "volume", "vol-cli", "data-cli"); err != nil {
		t.Fatalf("remove volume: %v\n%s", err, stderr)
	}
	poll.Until(t, 30*time.Second, "volume available", func() (bool, string) { st := status(); return st == "available", st })
}
