package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/history"
)

// smallDisk mounts a file system of size bytes (tmpfs) on a directory of
// the test's own, unmounted when the test ends; the test is skipped where
// mounting is refused (it needs root), and fails then in CI
// (INGOT_TEST_IRONIC=1, which runs as root).
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0700", size), "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Getenv("INGOT_TEST_IRONIC") == "1" {
			t.Fatalf("a size-limited file system: mount -t tmpfs: %v %s", err, out)
		}
		t.Skipf("a size-limited file system needs mount -t tmpfs (root): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes a file into dir until its file system is full; removing
// the file gives the space back.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := fh.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return path
		}
	}
}

// novaFault decodes a Nova error body: its one member's code.
type novaFault map[string]struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// post asks for a server named name: the status, Retry-After and the
// error body, if any.
func (f *faultyIronic) post(name string) (int, string, novaFault) {
	f.api.T.Helper()
	raw, _ := json.Marshal(map[string]any{"server": map[string]any{"name": name, "flavorRef": "bm", "imageRef": f.cfg.Images[0].ID,
		"networks": []map[string]string{{"uuid": f.cfg.Networks[0].ID}}}})
	req, _ := http.NewRequest(http.MethodPost, f.api.URL+"/v2.1/servers", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.api.HTTP.Do(req)
	if err != nil {
		f.api.T.Fatalf("create %s: %v", name, err)
	}
	defer resp.Body.Close()
	var out novaFault
	if resp.StatusCode >= 400 {
		_ = json.NewDecoder(resp.Body).Decode(&out)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), out
}

// TestSQLiteDiskFull: the file system holding ingot's SQLite database
// fills up (a 16 MiB tmpfs, filled by a file). Writes are refused at once
// with 503, Retry-After and Nova's body — as for a PostgreSQL that is
// away; before, a 500 "has either erred" — never a hang or an exit; reads go on being
// served; nothing half-written (no server of a refused create is ever
// listed, a refused delete leaves its server as it was); once the space
// returns, serving resumes: a create is accepted and built, the refused
// delete sent again is carried out; the history check finds nothing lost,
// resurrected, double-held or leaked.
func TestSQLiteDiskFull(t *testing.T) {
	disk := smallDisk(t, 16<<20)
	f := newFaultyIronicOn(t, 10*time.Second, disk)
	var ids []string
	for i := range 3 {
		ids = append(ids, f.create(fmt.Sprintf("before-%d", i)))
	}
	for _, id := range ids {
		f.api.WaitStatus(id, "ACTIVE", time.Minute)
	}
	filler := fill(t, disk)
	full := time.Now()
	var refused []string
	var slowest time.Duration
	for i := 0; i < 10 && len(refused) < 3; i++ {
		name := fmt.Sprintf("full-%02d", i)
		began := time.Now()
		code, retry, out := f.post(name)
		slowest = max(slowest, time.Since(began))
		switch {
		case code == http.StatusAccepted: // the journal still had room: a write that fitted
			t.Logf("create %s accepted %s after the disk filled", name, time.Since(full).Round(time.Millisecond))
		case code == http.StatusServiceUnavailable && retry != "" && len(out) == 1:
			refused = append(refused, name)
			for key, b := range out {
				if b.Code != code || b.Message == "" {
					t.Errorf("refused create %s: %d %s %+v, want Nova's fault body", name, code, key, b)
				}
			}
		default:
			t.Fatalf("create %s with the disk full: HTTP %d (Retry-After %q) %+v, want 202 or 503 with Retry-After and Nova's body", name, code, retry, out)
		}
	}
	if len(refused) == 0 {
		t.Fatalf("no create refused in 10 with the disk full")
	}
	delCode := f.api.Call("DELETE", "/v2.1/servers/"+ids[0], nil, nil)
	if delCode != http.StatusNoContent && delCode != http.StatusServiceUnavailable {
		t.Errorf("delete with the disk full: HTTP %d, want 204 or 503", delCode)
	}
	if s, code := f.api.Get(ids[1]); code != http.StatusOK || s.Status != "ACTIVE" {
		t.Errorf("show with the disk full: HTTP %d %s, want 200 ACTIVE", code, s.Status)
	}
	if !f.p.Alive() {
		t.Fatalf("ingot exited with the disk full:\n%s", f.p.Tail(20))
	}
	if delCode != http.StatusNoContent {
		if s, _ := f.api.Get(ids[0]); s.Deleting() {
			t.Errorf("delete refused with HTTP %d, yet the server shows it: %+v", delCode, s)
		}
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	after := f.create("after")
	f.api.Delete(ids[0])
	f.api.WaitStatus(after, "ACTIVE", time.Minute)
	f.api.WaitGone(ids[0], time.Minute)
	servers, err := history.Servers(f.api.HTTP, f.api.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		for _, name := range refused {
			if s.Name == name {
				t.Errorf("the refused create %s left server %s (%s)", name, s.ID, s.Status)
			}
		}
	}
	t.Logf("SQLite's disk full: %d creates refused (a 5xx in at most %s), the delete answered %d, reads served, ingot up; space back → a create built and the delete done; %s",
		len(refused), slowest.Round(time.Millisecond), delCode, f.checkHistory(t))
}
