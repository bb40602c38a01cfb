package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// Native fuzz targets for the request parsers: whatever the input, the
// API answers without a panic (which wrap would turn into a 500) and
// without any 5xx. `go test` runs the committed seeds (testdata/fuzz);
// .ci/run fuzzes each target for a bounded time:
//
//	go test -run '^$' -fuzz FuzzCreateServer -fuzztime 20s ./internal/api/

// fuzzFixture is one API per target, made before fuzzing (a fixture per
// input would make the fuzzer measure SQLite's open, not the parser),
// with a server to act on.
type fuzzFixture struct {
	f   *fixture
	srv string
}

func newFuzzFixture(f *testing.F) *fuzzFixture {
	fx := newFixture(f)
	return &fuzzFixture{f: fx, srv: fx.create("fuzz-target")}
}

// create makes a server from inside a fuzz function (no fixture helpers:
// they take the *testing.F).
func (ff *fuzzFixture) create(t *testing.T) string {
	body := `{"server": {"name": "victim", "imageRef": "` + imageID + `", "flavorRef": "1", "networks": "auto"}}`
	req := httptest.NewRequest("POST", "/v2.1/servers", bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	ff.f.api.ServeHTTP(rec, req)
	var out struct{ Server struct{ ID string } }
	if rec.Code != http.StatusAccepted || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
		t.Fatalf("create: %d %s", rec.Code, rec.Body.Bytes())
	}
	return out.Server.ID
}

// serveFuzz runs one request through the handler in process.
func serveFuzz(t *testing.T, f *fixture, req *http.Request) {
	req.Header.Set("X-Roles", "admin,member,reader")
	rec := httptest.NewRecorder()
	f.api.ServeHTTP(rec, req)
	if rec.Code >= 500 {
		t.Fatalf("%s %s: %d %s", req.Method, req.URL, rec.Code, rec.Body.Bytes())
	}
}

func FuzzCreateServer(f *testing.F) {
	for _, seed := range []string{
		`{"server": {"name": "vm1", "imageRef": "11111111-2222-3333-4444-555555555555", "flavorRef": "1", "networks": "auto"}}`,
		`{"server": {"name": "vm", "flavorRef": 1, "block_device_mapping_v2": [{"source_type": "volume", "uuid": "00000000-0000-0000-0000-000000000000", "boot_index": "0"}]}}`,
		`{"server": {"name": "x", "imageRef": "debian-12", "flavorRef": "bm.small", "metadata": {"a": "b"}, "key_name": "k", "user_data": "dm0K", "min_count": "1"}}`,
		`{"server": {"name": "\u0000", "networks": [{"uuid": "99999999-8888-7777-6666-555555555555", "fixed_ip": "1"}]}}`,
		`{"server": {"name": "m", "imageRef": "debian-12", "flavorRef": "1", "min_count": 2, "max_count": "3", "return_reservation_id": "yes", "adminPass": "", "accessIPv4": "1.2.3.4", "accessIPv6": "::1"}}`,
		`{"server": null}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(seed), "2.90")
	}
	ff := newFuzzFixture(f)
	f.Fuzz(func(t *testing.T, body []byte, mv string) {
		fx := ff.f
		req := httptest.NewRequest("POST", "/v2.1/servers", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-OpenStack-Nova-API-Version", mv)
		serveFuzz(t, fx, req)
	})
}

func FuzzServerAction(f *testing.F) {
	for _, seed := range []string{`{"forceDelete": null}`, `{"reboot": {"type": "HARD"}}`, `{"a": 1, "b": 2}`, `{}`, `null`, `"x"`,
		`{"os-stop": null}`, `{"rebuild": {"imageRef": "11111111-2222-3333-4444-555555555555", "metadata": {"a": "b"}, "key_name": null}}`,
		`{"rescue": {"adminPass": "p"}}`, `{"lock": {"locked_reason": "r"}}`, `{"unlock": null}`, `{"unrescue": null}`} {
		f.Add([]byte(seed))
	}
	ff := newFuzzFixture(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		fx := ff.f
		// A fresh target for each input that may delete it.
		id := ff.srv
		if bytes.Contains(body, []byte("forceDelete")) {
			id = ff.create(t)
		}
		req := httptest.NewRequest("POST", "/v2.1/servers/"+id+"/action", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		serveFuzz(t, fx, req)
	})
}

func FuzzListQuery(f *testing.F) {
	for _, seed := range []string{
		"name=web&status=ACTIVE&limit=5", "name=%5Eweb%5B0-9%5D%24", "all_tenants=1&project_id=x", "marker=nope",
		"image=debian-12&flavor=1", "limit=-1", "status=bogus", "name=(a*)*b", "all_tenants=maybe",
		"sort_key=display_name&sort_dir=asc&sort_key=uuid", "changes-since=2026-11-30T01:00:00Z&changes-before=2026-11-30",
		"tags=a,b&not-tags-any=c&tags-any=", "status=SHUTOFF&sort_key=host",
	} {
		f.Add(seed, "/v2.1/servers/detail")
	}
	f.Add("limit=2&marker=k", "/v2.1/os-keypairs")
	f.Add("device_id=x", "/v2.1/ports")
	f.Add("limit=1", "/volume/v3/ingot/volumes/detail")
	f.Add("tenant_id=x", "/v2.1/limits")
	f.Add("is_public=None&minRam=1", "/v2.1/flavors/detail")
	ff := newFuzzFixture(f)
	paths := []string{"/v2.1/servers", "/v2.1/servers/detail", "/v2.1/os-keypairs", "/v2.1/ports",
		"/volume/v3/ingot/volumes/detail", "/v2.1/limits", "/v2.1/flavors/detail", "/v2.1/images", "/v2.1/networks"}
	f.Fuzz(func(t *testing.T, query, path string) {
		fx := ff.f
		known := false
		for _, p := range paths {
			known = known || p == path
		}
		if !known {
			path = paths[len(query)%len(paths)]
		}
		u := &url.URL{Path: path, RawQuery: query}
		req := httptest.NewRequest("GET", "/", nil)
		req.URL, req.RequestURI = u, u.RequestURI()
		req.Header.Set("X-OpenStack-Nova-API-Version", "2.90")
		serveFuzz(t, fx, req)
	})
}

func FuzzMicroversion(f *testing.F) {
	for _, seed := range []struct{ nova, os string }{
		{"2.90", ""}, {"", "compute 2.47"}, {"latest", "compute latest"}, {"2.", "compute"},
		{"3.0", "volume 3.0, compute 2.1"}, {"2.-1", ""}, {"2.+5", ""}, {"99999999999999999999.1", ""},
	} {
		f.Add(seed.nova, seed.os)
	}
	ff := newFuzzFixture(f)
	f.Fuzz(func(t *testing.T, nova, os string) {
		fx := ff.f
		req := httptest.NewRequest("GET", "/v2.1/servers/"+ff.srv, nil)
		if nova != "" {
			req.Header.Set("X-OpenStack-Nova-API-Version", nova)
		}
		if os != "" {
			req.Header.Set("OpenStack-API-Version", os)
		}
		serveFuzz(t, fx, req)
	})
}
