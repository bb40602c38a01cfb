package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
)

func zoneNames(t *testing.T, f *fixture, path string) []string {
	t.Helper()
	var out []string
	for _, z := range list(t, f.do("GET", path, "2.1", nil).want(t, http.StatusOK).body, "availabilityZoneInfo") {
		out = append(out, z.(map[string]any)["zoneName"].(string))
	}
	return out
}

// An aggregate's zone is its hosts' zone in every listing, and a server is
// accepted into a zone only when every compute host is in it.
func TestAggregateZones(t *testing.T) {
	f, held := adminFixture(t)
	createWithAZ := func(az string) response {
		body := validCreate()
		body["server"].(map[string]any)["availability_zone"] = az
		return f.do("POST", "/v2.1/servers", "2.90", body)
	}
	if got := zoneNames(t, f, "/v2.1/os-availability-zone"); len(got) != 1 || got[0] != "nova" {
		t.Fatalf("zones before: %v", got)
	}
	createWithAZ("z1").novaError(t, 400, "badRequest")
	plain := createAgg(t, f, `{"aggregate": {"name": "plain"}}`)
	f.do("POST", aggPath(plain)+"/action", "2.1", `{"add_host": {"host": "replica-a"}}`).want(t, 200)
	if got := zoneNames(t, f, "/v2.1/os-availability-zone"); len(got) != 1 || got[0] != "nova" {
		t.Fatalf("an aggregate without a zone moved the host: %v", got)
	}

	id := createAgg(t, f, `{"aggregate": {"name": "a1", "availability_zone": "z1"}}`)
	if got := zoneNames(t, f, "/v2.1/os-availability-zone"); len(got) != 1 || got[0] != "nova" {
		t.Fatalf("a zone without hosts is listed: %v", got)
	}
	f.do("POST", aggPath(id)+"/action", "2.1", `{"add_host": {"host": "replica-a"}}`).want(t, 200)
	if got := zoneNames(t, f, "/v2.1/os-availability-zone"); len(got) != 1 || got[0] != "z1" {
		t.Fatalf("zones: %v", got)
	}
	if got := zoneNames(t, f, "/v2.1/os-availability-zone/detail"); len(got) != 1 || got[0] != "z1" {
		t.Fatalf("zones detail: %v", got)
	}
	d := list(t, f.do("GET", "/v2.1/os-availability-zone/detail", "2.1", nil).want(t, 200).body, "availabilityZoneInfo")
	if obj(t, d[0], "hosts", "replica-a", "nova-compute")["available"] != true {
		t.Fatalf("detail: %v", d)
	}
	for _, s := range list(t, f.do("GET", "/v2.1/os-services", "2.1", nil).want(t, 200).body, "services") {
		s := s.(map[string]any)
		if want := map[bool]string{true: "z1", false: "internal"}[s["binary"] == "nova-compute"]; s["zone"] != want {
			t.Fatalf("service %v: want zone %s", s, want)
		}
	}
	if hs := list(t, f.do("GET", "/v2.1/os-hosts?zone=z1", "2.1", nil).want(t, 200).body, "hosts"); len(hs) != 1 {
		t.Fatalf("hosts in z1: %v", hs)
	}
	if az := obj(t, f.do("GET", "/v2.1/servers/"+held, "2.1", nil).want(t, 200).body, "server")["OS-EXT-AZ:availability_zone"]; az != "z1" {
		t.Fatalf("server zone %v", az)
	}
	// Another replica's write (straight to the store) shows at once: the
	// zones kept between requests follow the store's admin revision.
	z1, z2 := "z1", "z2"
	if _, err := f.store.UpdateAggregate(t.Context(), int64(id), nil, map[string]*string{store.AggregateAZKey: &z2}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if az := obj(t, f.do("GET", "/v2.1/servers/"+held, "2.1", nil).want(t, 200).body, "server")["OS-EXT-AZ:availability_zone"]; az != "z2" {
		t.Fatalf("server zone after another replica's change %v", az)
	}
	if _, err := f.store.UpdateAggregate(t.Context(), int64(id), nil, map[string]*string{store.AggregateAZKey: &z1}, time.Now()); err != nil {
		t.Fatal(err)
	}
	createWithAZ("nova").novaError(t, 400, "badRequest")
	s := obj(t, createWithAZ("z1").want(t, http.StatusAccepted).body, "server")
	if az := obj(t, f.do("GET", "/v2.1/servers/"+s["id"].(string), "2.1", nil).want(t, 200).body, "server")["OS-EXT-AZ:availability_zone"]; az != "z1" {
		t.Fatalf("new server zone %v", az)
	}

	f.do("POST", aggPath(id)+"/action", "2.1", `{"remove_host": {"host": "replica-a"}}`).want(t, 200)
	if got := zoneNames(t, f, "/v2.1/os-availability-zone"); len(got) != 1 || got[0] != "nova" {
		t.Fatalf("zones after: %v", got)
	}
	createWithAZ("z1").novaError(t, 400, "badRequest")
}
