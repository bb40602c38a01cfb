package api_test

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/store"
)

func createWith(extra map[string]any) map[string]any {
	b := validCreate()
	s := b["server"].(map[string]any)
	for k, v := range extra {
		s[k] = v
	}
	return b
}

// TestCreateAdminPass: a generated password (or the caller's) is answered
// once, kept only for the config drive, and in no later answer; with
// instance passwords off none is generated or answered.
func TestCreateAdminPass(t *testing.T) {
	f := newFixture(t)
	r := f.do("POST", "/v2.1/servers", "2.90", validCreate()).want(t, http.StatusAccepted)
	srv := obj(t, r.body, "server")
	checkMembers(t, "create answer", srv, []string{"id", "links", "OS-DCF:diskConfig", "security_groups", "adminPass"})
	pw, _ := srv["adminPass"].(string)
	if !regexp.MustCompile(`^[A-Za-z0-9]{12}$`).MatchString(pw) {
		t.Fatalf("generated adminPass %q", pw)
	}
	id := srv["id"].(string)
	if got := f.server(id).Spec.AdminPass; got != pw {
		t.Fatalf("stored password %q, want the answered one", got)
	}
	for _, path := range []string{"/v2.1/servers/" + id, "/v2.1/servers/detail", "/v2.1/servers/" + id + "/os-instance-actions"} {
		if raw := f.doWith(http.Header{"X-Ingot-Extensions": {"true"}}, "GET", path, "2.90", nil).want(t, 200).raw; strings.Contains(string(raw), pw) {
			t.Errorf("GET %s shows the password: %s", path, raw)
		}
	}
	given := obj(t, f.do("POST", "/v2.1/servers", "2.90", createWith(map[string]any{"adminPass": "my-Pass-1"})).want(t, 202).body, "server")
	if given["adminPass"] != "my-Pass-1" || f.server(given["id"].(string)).Spec.AdminPass != "my-Pass-1" {
		t.Errorf("given password: answered %v, stored %q", given["adminPass"], f.server(given["id"].(string)).Spec.AdminPass)
	}

	quiet := newFixtureWith(t, func(c *api.Config) { c.DisableInstancePassword = true })
	q := obj(t, quiet.do("POST", "/v2.1/servers", "2.90", validCreate()).want(t, 202).body, "server")
	checkMembers(t, "create answer without instance passwords", q, []string{"id", "links", "OS-DCF:diskConfig", "security_groups"})
	if p := quiet.server(q["id"].(string)).Spec.AdminPass; p != "" {
		t.Errorf("a password %q was generated with instance passwords off", p)
	}
	q = obj(t, quiet.do("POST", "/v2.1/servers", "2.90", createWith(map[string]any{"adminPass": "kept"})).want(t, 202).body, "server")
	if _, ok := q["adminPass"]; ok || quiet.server(q["id"].(string)).Spec.AdminPass != "kept" {
		t.Errorf("a given password with instance passwords off: answer %v", q)
	}
	// A rebuild's password replaces the config drive's.
	a := f.activeServer("rb")
	rb := obj(t, f.action(nil, a, "2.90", map[string]any{"rebuild": map[string]any{"imageRef": imageID, "adminPass": "new-Pass"}}).want(t, 202).body, "server")
	if rb["adminPass"] != "new-Pass" || f.server(a).Spec.AdminPass != "new-Pass" {
		t.Errorf("rebuild password: answered %v, stored %q", rb["adminPass"], f.server(a).Spec.AdminPass)
	}
}

// TestAccessIPs: kept in canonical form, shown, changed by PUT and rebuild.
func TestAccessIPs(t *testing.T) {
	f := newFixture(t)
	r := f.do("POST", "/v2.1/servers", "2.90", createWith(map[string]any{
		"accessIPv4": "1.1.1.1", "accessIPv6": "0000:0000:0000:0000:0000:babe:220.12.22.2"})).want(t, 202)
	id := obj(t, r.body, "server")["id"].(string)
	s := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.1", nil).want(t, 200).body, "server")
	if s["accessIPv4"] != "1.1.1.1" || s["accessIPv6"] != "::babe:dc0c:1602" {
		t.Errorf("access IPs %v %v", s["accessIPv4"], s["accessIPv6"])
	}
	put := obj(t, f.do("PUT", "/v2.1/servers/"+id, "2.1", map[string]any{"server": map[string]any{"accessIPv4": "2.2.2.2"}}).want(t, 200).body, "server")
	if put["accessIPv4"] != "2.2.2.2" || put["accessIPv6"] != "::babe:dc0c:1602" {
		t.Errorf("after PUT: %v %v", put["accessIPv4"], put["accessIPv6"])
	}
	f.do("PUT", "/v2.1/servers/"+id, "2.1", map[string]any{"server": map[string]any{"accessIPv6": nil}}).want(t, 200)
	if sp := f.server(id).Spec; sp.AccessIPv4 != "2.2.2.2" || sp.AccessIPv6 != "" {
		t.Errorf("after clearing v6: %+v", sp)
	}
	f.advance(id, activeSetup)
	rb := obj(t, f.action(nil, id, "2.90", map[string]any{"rebuild": map[string]any{"imageRef": imageID, "accessIPv6": "2001:db8::1"}}).want(t, 202).body, "server")
	if rb["accessIPv6"] != "2001:db8::1" || rb["accessIPv4"] != "2.2.2.2" {
		t.Errorf("after rebuild: %v %v", rb["accessIPv4"], rb["accessIPv6"])
	}
}

// TestDiskConfig: OS-DCF:diskConfig shows what was asked at create, PUT and
// rebuild (Nova keeps it; Tempest's test_disk_config checks it), MANUAL
// when never asked; anything but AUTO or MANUAL is a 400.
func TestDiskConfig(t *testing.T) {
	f := newFixture(t)
	show := func(id string) any {
		return obj(t, f.do("GET", "/v2.1/servers/"+id, "2.1", nil).want(t, 200).body, "server")["OS-DCF:diskConfig"]
	}
	plain := obj(t, f.do("POST", "/v2.1/servers", "2.90", createWith(nil)).want(t, 202).body, "server")["id"].(string)
	if got := show(plain); got != "MANUAL" {
		t.Errorf("never asked: %v", got)
	}
	r := f.do("POST", "/v2.1/servers", "2.90", createWith(map[string]any{"OS-DCF:diskConfig": "AUTO"})).want(t, 202)
	created := obj(t, r.body, "server")
	id := created["id"].(string)
	if created["OS-DCF:diskConfig"] != "AUTO" || show(id) != "AUTO" {
		t.Errorf("create with AUTO: answered %v, shown %v", created["OS-DCF:diskConfig"], show(id))
	}
	put := obj(t, f.do("PUT", "/v2.1/servers/"+id, "2.1", map[string]any{"server": map[string]any{"OS-DCF:diskConfig": "MANUAL"}}).want(t, 200).body, "server")
	if put["OS-DCF:diskConfig"] != "MANUAL" || show(id) != "MANUAL" {
		t.Errorf("PUT to MANUAL: answered %v, shown %v", put["OS-DCF:diskConfig"], show(id))
	}
	f.advance(id, activeSetup)
	rb := obj(t, f.action(nil, id, "2.90", map[string]any{"rebuild": map[string]any{"imageRef": imageID, "OS-DCF:diskConfig": "AUTO"}}).want(t, 202).body, "server")
	if rb["OS-DCF:diskConfig"] != "AUTO" || show(id) != "AUTO" {
		t.Errorf("rebuild with AUTO: answered %v, shown %v", rb["OS-DCF:diskConfig"], show(id))
	}
	f.do("PUT", "/v2.1/servers/"+id, "2.1", map[string]any{"server": map[string]any{"OS-DCF:diskConfig": "auto"}}).want(t, 400)
	f.do("POST", "/v2.1/servers", "2.90", createWith(map[string]any{"OS-DCF:diskConfig": 1})).want(t, 400)
}

// TestMultipleCreate: min_count/max_count make that many servers, named
// name-1…, sharing one reservation id; the answer is the first server, or
// the reservation id; the quota decides how many, atomically.
func TestMultipleCreate(t *testing.T) {
	f := newFixture(t)
	r := f.do("POST", "/v2.1/servers", "2.90", createWith(map[string]any{"name": "web", "min_count": 3})).want(t, 202)
	first := obj(t, r.body, "server")["id"].(string)
	if _, ok := r.body["reservation_id"]; ok {
		t.Errorf("reservation_id without return_reservation_id: %s", r.raw)
	}
	servers := list(t, f.do("GET", "/v2.1/servers/detail", "2.3", nil).want(t, 200).body, "servers")
	if len(servers) != 3 {
		t.Fatalf("%d servers, want 3", len(servers))
	}
	var names []string
	resv := servers[0].(map[string]any)["OS-EXT-SRV-ATTR:reservation_id"].(string)
	if !regexp.MustCompile(`^r-[0-9a-z]{8}$`).MatchString(resv) {
		t.Errorf("reservation id %q", resv)
	}
	for i, e := range servers {
		s := e.(map[string]any)
		names = append(names, s["name"].(string))
		if s["OS-EXT-SRV-ATTR:reservation_id"] != resv || s["OS-EXT-SRV-ATTR:launch_index"] != float64(i) {
			t.Errorf("server %d: reservation %v launch_index %v", i, s["OS-EXT-SRV-ATTR:reservation_id"], s["OS-EXT-SRV-ATTR:launch_index"])
		}
		if h := s["OS-EXT-SRV-ATTR:hostname"]; h != s["name"] {
			t.Errorf("server %d: hostname %v, want its name", i, h)
		}
	}
	if !slices.Equal(names, []string{"web-1", "web-2", "web-3"}) || servers[0].(map[string]any)["id"] != first {
		t.Errorf("names %v; first %v, answered %s", names, servers[0].(map[string]any)["id"], first)
	}
	// Each server converges on its own: one record each, one create action each.
	for _, e := range servers {
		if acts := f.actionNames(e.(map[string]any)["id"].(string)); len(acts) != 1 || acts[0] != "create" {
			t.Errorf("actions %v", acts)
		}
	}
	// The reservation_id filter.
	if l := list(t, f.do("GET", "/v2.1/servers?reservation_id="+resv, "2.1", nil).want(t, 200).body, "servers"); len(l) != 3 {
		t.Errorf("reservation_id filter: %d servers", len(l))
	}
	single := f.create("alone")
	if l := list(t, f.do("GET", "/v2.1/servers?reservation_id="+f.server(single).Spec.ReservationID, "2.1", nil).want(t, 200).body, "servers"); len(l) != 1 {
		t.Errorf("a single server's reservation: %d servers", len(l))
	}

	rr := f.do("POST", "/v2.1/servers", "2.90", createWith(map[string]any{"name": "db", "min_count": 1, "max_count": 2, "return_reservation_id": "True"})).want(t, 202)
	checkMembers(t, "return_reservation_id answer", rr.body, []string{"reservation_id"})
	if l := list(t, f.do("GET", "/v2.1/servers?reservation_id="+rr.body["reservation_id"].(string), "2.1", nil).want(t, 200).body, "servers"); len(l) != 2 ||
		l[0].(map[string]any)["name"] != "db-1" {
		t.Errorf("return_reservation_id servers: %v", l)
	}

	// Quota: 6 used of 8 → min 1 max 5 gets 2; then min 1 gets a 403 and
	// writes nothing; max_count within the quota with min_count beyond it too.
	if err := f.store.SetQuotas(context.Background(), "ingot", store.Limits{store.ResInstances: 8}); err != nil {
		t.Fatal(err)
	}
	before := f.serverCount()
	f.do("POST", "/v2.1/servers", "2.90", createWith(map[string]any{"name": "q", "min_count": 3, "max_count": 5})).novaError(t, http.StatusForbidden, "forbidden")
	if n := f.serverCount(); n != before {
		t.Fatalf("a refused multiple create wrote %d servers", n-before)
	}
	msg := f.do("POST", "/v2.1/servers", "2.90", createWith(map[string]any{"name": "q", "min_count": 3})).novaError(t, http.StatusForbidden, "forbidden")
	if msg != "Quota exceeded for instances: Requested 3, but already used 6 of 8 instances" {
		t.Errorf("quota message %q", msg)
	}
	r = f.do("POST", "/v2.1/servers", "2.90", createWith(map[string]any{"name": "q", "max_count": 5})).want(t, 202)
	if n := f.serverCount(); n != before+2 {
		t.Fatalf("min 1 max 5 with 2 left made %d", n-before)
	}
	if l := list(t, f.do("GET", "/v2.1/servers?name=^q-", "2.1", nil).want(t, 200).body, "servers"); len(l) != 2 {
		t.Errorf("q servers %v", l)
	}
	f.do("POST", "/v2.1/servers", "2.90", validCreate()).novaError(t, http.StatusForbidden, "forbidden")
	// One left after a delete: max 5 makes one, named without a suffix.
	f.do("DELETE", "/v2.1/servers/"+single, "2.1", nil).want(t, http.StatusNoContent)
	one := obj(t, f.do("POST", "/v2.1/servers", "2.90", createWith(map[string]any{"name": "last", "max_count": 5})).want(t, 202).body, "server")
	if n := f.server(one["id"].(string)).Name; n != "last" {
		t.Errorf("the only server of a multiple create is named %q, want the name itself", n)
	}
}

// TestListFiltersIPHostNode: ip and ip6 match addresses from the start (a
// regular expression); host and node are for admins, ignored for others.
func TestListFiltersIPHostNode(t *testing.T) {
	f := newFixture(t)
	a, b := f.activeServer("a"), f.create("b")
	for i, p := range []store.Port{
		{ID: "aaaaaaaa-0000-0000-0000-000000000001", ServerID: a, NetworkID: netID, IP: "10.0.0.11", MAC: "52:54:00:00:00:01"},
		{ID: "aaaaaaaa-0000-0000-0000-000000000002", ServerID: b, NetworkID: netID, IP: "10.0.0.110", MAC: "52:54:00:00:00:02"},
	} {
		p.CreatedAt = t0
		if err := f.store.CreatePort(context.Background(), p); err != nil {
			t.Fatal(i, err)
		}
	}
	node := f.server(a).NodeID
	names := func(h http.Header, query, mv string) []string {
		t.Helper()
		var out []string
		for _, e := range list(t, f.doWith(h, "GET", "/v2.1/servers?"+query, mv, nil).want(t, 200).body, "servers") {
			out = append(out, e.(map[string]any)["name"].(string))
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		h            http.Header
		query, mv    string
		want         []string
		whatItChecks string
	}{
		{nil, "ip=10.0.0.11", "2.1", []string{"a", "b"}, "a prefix, as Python's re.match"},
		{nil, "ip=10.0.0.11$", "2.1", []string{"a"}, "anchored at the end by the pattern"},
		{nil, `ip=10\.0\.0\.1.0`, "2.1", []string{"b"}, "a pattern"},
		{nil, "ip=192.", "2.1", nil, "no address matches"},
		{nil, "ip6=10.0", "2.1", nil, "ip6 looks at IPv6 addresses only"},
		{member, "ip=10.0.0.11$", "2.1", []string{"a"}, "ip is for everyone"},
		{nil, "host=ingot", "2.1", []string{"a"}, "the host of a server holding a node"},
		{nil, "node=" + node, "2.1", []string{"a"}, "the node"},
		{nil, "node=other", "2.1", nil, "another node"},
		{member, "host=nowhere", "2.1", []string{"a", "b"}, "ignored for a member"},
		{member, "node=other", "2.1", []string{"a", "b"}, "ignored for a member"},
	} {
		if got := names(c.h, c.query, c.mv); !slices.Equal(got, c.want) {
			t.Errorf("%s (%s): %v, want %v", c.query, c.whatItChecks, got, c.want)
		}
	}
	f.do("GET", "/v2.1/servers?ip=(", "2.1", nil).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("GET", "/v2.1/servers/detail?ip6=[", "2.90", nil).novaError(t, http.StatusBadRequest, "badRequest")
}

// TestMultipleCreateNeedsAnAtomicStore: on a store that cannot create
// several servers in one transaction, max_count > 1 is a 400 and nothing is
// written; one server is created as ever.
func TestMultipleCreateNeedsAnAtomicStore(t *testing.T) {
	var st store.Store
	f := newFixtureWith(t, func(c *api.Config) {
		st = struct{ store.Store }{c.Store} // only store.Store's methods
		c.Store = st
	})
	if _, ok := st.(store.MultiCreator); ok {
		t.Fatal("the wrapper still creates several at once")
	}
	f.do("POST", "/v2.1/servers", "2.90", createWith(map[string]any{"max_count": 2})).novaError(t, http.StatusBadRequest, "badRequest")
	if n := f.serverCount(); n != 0 {
		t.Fatalf("%d servers written", n)
	}
	f.do("POST", "/v2.1/servers", "2.90", createWith(map[string]any{"min_count": 1, "max_count": 1})).want(t, http.StatusAccepted)
}
