package api_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

func personality(n int, path string, contents []byte) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"path": path, "contents": base64.StdEncoding.EncodeToString(contents)}
	}
	return out
}

func createWithFiles(f *fixture, mv string, files any) response {
	body := validCreate()
	body["server"].(map[string]any)["personality"] = files
	return f.doWith(member, "POST", "/v2.1/servers", mv, body)
}

// TestPersonalityCreate: below 2.57 personality files are kept for the
// config drive, within Nova's injected-file quotas (5 files, 10240 bytes of
// base64 each, paths of 255), over which Nova answers 403; from 2.57 the
// member is unknown (400).
func TestPersonalityCreate(t *testing.T) {
	f := newFixture(t)
	files := []any{map[string]any{"path": "/etc/motd", "contents": base64.StdEncoding.EncodeToString([]byte("hi\n"))}}
	id := obj(t, createWithFiles(f, "2.56", files).want(t, http.StatusAccepted).body, "server")["id"].(string)
	if got := f.server(id).Spec.Files; len(got) != 1 || got[0] != (lifecycle.File{Path: "/etc/motd", Contents: "aGkK"}) {
		t.Errorf("files kept: %+v", got)
	}
	wantMsg(t, createWithFiles(f, "2.57", files), 400, "badRequest", "'personality' was unexpected")
	for _, c := range []struct {
		files  any
		status int
		msg    string
	}{
		{personality(6, "/a", []byte("x")), 403, "Personality file limit exceeded"},
		{personality(1, "/"+strings.Repeat("p", 255), []byte("x")), 403, "Personality file path exceeds maximum 255"},
		{personality(1, "/a", make([]byte, 7681)), 403, "Personality file content exceeds maximum 10240"},
		{[]any{map[string]any{"path": "/a", "contents": "not base64!"}}, 400, "base64"},
		{[]any{map[string]any{"path": "/a", "mode": "0600"}}, 400, "'mode' was unexpected"},
		{"/etc/motd", 400, "array"},
	} {
		key := map[int]string{400: "badRequest", 403: "forbidden"}[c.status]
		wantMsg(t, createWithFiles(f, "2.56", c.files), c.status, key, c.msg)
	}
	// 7680 bytes are 10240 of base64: at the limit.
	createWithFiles(f, "2.56", personality(5, "/a", make([]byte, 7680))).want(t, http.StatusAccepted)
	f.do("PUT", "/v2.1/os-quota-sets/ingot", "2.56", map[string]any{"quota_set": map[string]any{"injected_files": 6}}).want(t, http.StatusOK)
	createWithFiles(f, "2.56", personality(6, "/a", []byte("x"))).want(t, http.StatusAccepted)
}

// TestPersonalityRebuild: a rebuild below 2.57 replaces the files with its
// own, or none when it names none (as Nova: files are passed per build).
func TestPersonalityRebuild(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("rb")
	rb := func(mv string, files any) response {
		m := map[string]any{"imageRef": image2ID}
		if files != nil {
			m["personality"] = files
		}
		return f.action(member, id, mv, map[string]any{"rebuild": m})
	}
	wantMsg(t, rb("2.57", personality(1, "/a", []byte("x"))), 400, "badRequest", "personality")
	wantMsg(t, rb("2.56", personality(6, "/a", []byte("x"))), 403, "forbidden", "Personality file limit exceeded")
	rb("2.56", personality(2, "/etc/x", []byte("y"))).want(t, http.StatusAccepted)
	if got := f.server(id).Spec.Files; len(got) != 2 || got[1].Path != "/etc/x" {
		t.Fatalf("files after rebuild: %+v", got)
	}
	f.finishOp(id, lifecycle.PhaseActive)
	rb("2.56", nil).want(t, http.StatusAccepted)
	if got := f.server(id).Spec.Files; len(got) != 0 {
		t.Errorf("files after a rebuild without personality: %+v", got)
	}
}
