package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/store"
)

// volumeID takes the id out of `volume create`/`show` output.
func volumeID(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^id\s+([0-9a-f-]{36})$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no id in:\n%s", out)
	}
	return m[1]
}

func TestCLIVolumes(t *testing.T) {
	f := newCLIFixture(t)
	out, errOut, err := f.run("volume", "create", "boot", "--size", "20")
	if err != nil {
		t.Fatalf("volume create: %v\n%s%s", err, out, errOut)
	}
	boot := volumeID(t, out)
	if !regexp.MustCompile(`size\s+20 GB`).MatchString(out) || !regexp.MustCompile(`status\s+available`).MatchString(out) {
		t.Errorf("create output:\n%s", out)
	}
	out, _, err = f.run("volume", "create", "data", "--size", "5", "-o", "json")
	var created map[string]any
	if err != nil || json.Unmarshal([]byte(out), &created) != nil || created["name"] != "data" || created["size"] != 5.0 {
		t.Fatalf("volume create -o json: %v\n%s", err, out)
	}
	data := created["id"].(string)

	// A server booted from one volume with the other attached.
	body := map[string]any{"server": map[string]any{"name": "vm1", "flavorRef": "1", "networks": "none",
		"block_device_mapping_v2": []any{
			map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": boot, "boot_index": 0, "delete_on_termination": true},
			map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": data},
		}}}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", f.url+"/v2.1/servers", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var srv struct {
		Server struct{ ID string } `json:"server"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&srv)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || srv.Server.ID == "" {
		t.Fatalf("create server with volumes: %d", resp.StatusCode)
	}

	out, _, err = f.run("server", "show", "vm1") // by name: the list path reads image ""
	if err != nil {
		t.Fatalf("server show: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`volumes\s+`+boot+` \(deleted with the server\), `+data+`\n`).MatchString(out) ||
		!regexp.MustCompile(`image\s+-\n`).MatchString(out) {
		t.Errorf("server show lacks the volumes or shows an image:\n%s", out)
	}

	out, _, err = f.run("volume", "list")
	if err != nil {
		t.Fatalf("volume list: %v", err)
	}
	for _, id := range []string{boot, data} {
		if !regexp.MustCompile(id + `\s+\S+\s+\d+ GB\s+reserved\s+` + srv.Server.ID).MatchString(out) {
			t.Errorf("volume list does not show %s reserved by %s:\n%s", id, srv.Server.ID, out)
		}
	}
	out, _, err = f.run("volume", "show", "data")
	if err != nil || volumeID(t, out) != data || !regexp.MustCompile(`server\s+`+srv.Server.ID).MatchString(out) {
		t.Errorf("volume show by name: %v\n%s", err, out)
	}

	// Deleting a held volume is refused with Cinder's message.
	_, _, err = f.run("volume", "delete", boot)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "current status is: reserved") {
		t.Errorf("delete of a held volume: %v", err)
	}
	if err := f.store.ReleaseVolume(context.Background(), data, srv.Server.ID, false); err != nil {
		t.Fatal(err)
	}
	out, _, err = f.run("volume", "delete", "data")
	if err != nil || !strings.Contains(out, "volume "+data+" deleted") {
		t.Fatalf("volume delete: %v\n%s", err, out)
	}
	if _, err := f.store.GetVolume(context.Background(), data); err == nil {
		t.Error("deleted volume still stored")
	}
	_, _, err = f.run("volume", "show", data)
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("show of a deleted volume: %v", err)
	}
	_, _, err = f.run("volume", "show", "nope")
	if err == nil || !strings.Contains(err.Error(), `no volume with id or name "nope"`) {
		t.Errorf("show of an unknown name: %v", err)
	}
	_, _, err = f.run("volume", "create", "x", "--size", "0")
	if err == nil || !strings.Contains(err.Error(), "--size") {
		t.Errorf("create --size 0: %v", err)
	}
	if v, err := f.store.ListVolumes(context.Background(), "", 0); err != nil || len(v) != 1 || v[0].Status != store.VolumeReserved {
		t.Errorf("volumes left: %+v, %v; want the held boot volume only", v, err)
	}
}
