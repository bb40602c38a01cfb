package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
)

func TestCreateBadInputWritesNothing(t *testing.T) {
	f := newFixture(t)
	with := func(k string, v any) map[string]any {
		b := validCreate()
		b["server"].(map[string]any)[k] = v
		return b
	}
	without := func(k string) map[string]any {
		b := validCreate()
		delete(b["server"].(map[string]any), k)
		return b
	}
	cases := []struct {
		name   string
		body   any
		status int
		key    string
		msg    string // substring of the message, "" = any
	}{
		{"malformed JSON", `{"server": {"name": "x",`, 400, "badRequest", "Malformed"},
		{"empty body", ``, 400, "badRequest", "empty"},
		{"array body", `[]`, 400, "badRequest", "JSON object"},
		{"string body", `"server"`, 400, "badRequest", "JSON object"},
		{"number body", `42`, 400, "badRequest", "JSON object"},
		{"null body", `null`, 400, "badRequest", "JSON object"},
		{"no server key", `{}`, 400, "badRequest", "server"},
		{"server not object", `{"server": []}`, 400, "badRequest", "object"},
		{"server null", `{"server": null}`, 400, "badRequest", "object"},
		{"unknown top-level key", `{"server": {}, "extra": 1}`, 400, "badRequest", "extra"},
		{"missing name", without("name"), 400, "badRequest", "name"},
		{"name not string", with("name", 12), 400, "badRequest", "name"},
		{"blank name", with("name", "   "), 400, "badRequest", "name"},
		{"missing flavorRef", without("flavorRef"), 400, "badRequest", "flavorRef"},
		{"unknown flavorRef", with("flavorRef", "nope"), 400, "badRequest", "Flavor nope could not be found"},
		{"flavorRef bool", with("flavorRef", true), 400, "badRequest", "flavorRef"},
		{"missing imageRef", without("imageRef"), 400, "badRequest", "imageRef"},
		{"unknown imageRef", with("imageRef", unknownID), 400, "badRequest", "Image " + unknownID},
		{"imageRef object", with("imageRef", map[string]any{}), 400, "badRequest", "imageRef"},
		{"unknown network", with("networks", []any{map[string]any{"uuid": unknownID}}), 400, "badRequest", "Network " + unknownID},
		{"malformed network uuid", with("networks", []any{map[string]any{"uuid": "provisioning"}}), 400, "badRequest", "uuid"},
		{"network entry not object", with("networks", []any{"x"}), 400, "badRequest", "networks"},
		{"network without uuid", with("networks", []any{map[string]any{}}), 400, "badRequest", "uuid"},
		{"networks number", with("networks", 5), 400, "badRequest", "networks"},
		{"networks bogus word", with("networks", "some"), 400, "badRequest", "networks"},
		{"network twice", with("networks", []any{map[string]any{"uuid": netID}, map[string]any{"uuid": netID}}), 400, "badRequest", "twice"},
		{"port request", with("networks", []any{map[string]any{"port": unknownID}}), 400, "badRequest", "not supported"},
		{"metadata value number", with("metadata", map[string]any{"a": 1}), 400, "badRequest", "metadata"},
		{"metadata list", with("metadata", []any{"a"}), 400, "badRequest", "metadata"},
		{"metadata empty key", with("metadata", map[string]any{"": "v"}), 400, "badRequest", "metadata"},
		{"user_data not base64", with("user_data", "not base64!"), 400, "badRequest", "base64"},
		{"hostname invalid", with("hostname", "bad host!"), 400, "badRequest", "hostname"},
		{"min_count 0", with("min_count", 0), 400, "badRequest", "min_count"},
		{"min_count 2.5", with("min_count", 2.5), 400, "badRequest", "min_count"},
		{"max_count 0", with("max_count", 0), 400, "badRequest", "max_count"},
		{"max_count string -1", with("max_count", "-1"), 400, "badRequest", "max_count"},
		{"max_count bool", with("max_count", true), 400, "badRequest", "max_count"},
		{"max_count over the cap", with("max_count", 1001), 400, "badRequest", "max_count"},
		{"min_count above max_count", func() map[string]any {
			b := validCreate()
			b["server"].(map[string]any)["min_count"], b["server"].(map[string]any)["max_count"] = 3, 2
			return b
		}(), 400, "badRequest", "min_count must be <= max_count"},
		{"hostname with max_count 2", func() map[string]any {
			b := validCreate()
			b["server"].(map[string]any)["hostname"], b["server"].(map[string]any)["max_count"] = "h", 2
			return b
		}(), 400, "badRequest", "hostname"},
		{"return_reservation_id not boolean", with("return_reservation_id", "maybe"), 400, "badRequest", "return_reservation_id"},
		{"volume without source_type", with("block_device_mapping_v2", []any{map[string]any{"boot_index": 0}}), 400, "badRequest", "source_type"},
		{"unknown field", with("frobnicate", true), 400, "badRequest", "frobnicate"},
		{"security group", with("security_groups", []any{map[string]any{"name": "web"}}), 400, "badRequest", "security_groups"},
		{"admin password not string", with("adminPass", 12), 400, "badRequest", "adminPass"},
		{"description too long", with("description", strings.Repeat("d", 256)), 400, "badRequest", "description"},
		{"tag with a slash", with("tags", []any{"a/b"}), 400, "badRequest", "tags"},
		{"51 tags", with("tags", func() []any {
			var tt []any
			for i := range 51 {
				tt = append(tt, fmt.Sprint("t", i))
			}
			return tt
		}()), 400, "badRequest", "tags"},
		{"access ipv4 invalid", with("accessIPv4", "1.1.1.1.1.1"), 400, "badRequest", "accessIPv4"},
		{"access ipv4 given a v6", with("accessIPv4", "::1"), 400, "badRequest", "accessIPv4"},
		{"access ipv6 invalid", with("accessIPv6", "notvalid"), 400, "badRequest", "accessIPv6"},
		{"access ipv6 given a v4", with("accessIPv6", "1.2.3.4"), 400, "badRequest", "accessIPv6"},
		{"access ip number", with("accessIPv4", 7), 400, "badRequest", "accessIPv4"},
		{"unknown zone", with("availability_zone", "elsewhere"), 400, "badRequest", "availability zone"},
		{"too large", `{"server": {"name": "` + strings.Repeat("x", 2<<20) + `"}}`, 413, "HTTPRequestEntityTooLarge", "too large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := f.do("POST", "/v2.1/servers", "2.90", c.body)
			msg := r.novaError(t, c.status, c.key)
			if !strings.Contains(msg, c.msg) {
				t.Errorf("message %q does not mention %q", msg, c.msg)
			}
			if r.header.Get("X-Openstack-Request-Id") == "" {
				t.Errorf("no request id on an error")
			}
		})
	}
	if n := f.serverCount(); n != 0 {
		t.Fatalf("%d servers stored after bad requests, want 0", n)
	}
	if len(f.kicks) != 0 {
		t.Fatalf("reconciler kicked %d times for rejected requests", len(f.kicks))
	}
	r := f.do("GET", "/v2.1/servers/detail", "2.90", nil).want(t, 200)
	if l := list(t, r.body, "servers"); len(l) != 0 {
		t.Fatalf("listing shows %d servers after bad requests", len(l))
	}
}

func TestCreateCommitsBeforeAnswer(t *testing.T) {
	f := newFixture(t)
	body := validCreate()
	s := body["server"].(map[string]any)
	s["metadata"] = map[string]any{"a": "b"}
	s["user_data"] = "dm0K"
	s["hostname"] = "h4"
	s["key_name"] = "k1"
	f.do("POST", "/v2.1/os-keypairs", "2.90", map[string]any{"keypair": map[string]any{"name": "k1", "public_key": ed25519Key(t)}}).want(t, http.StatusCreated)
	s["min_count"], s["max_count"] = 1, "1"
	s["security_groups"] = []any{map[string]any{"name": "default"}}
	s["config_drive"], s["OS-DCF:diskConfig"], s["description"], s["availability_zone"] = true, "AUTO", nil, "nova"
	s["flavorRef"] = "http://host/v2.1/flavors/1" // Nova accepts a URL reference
	r := f.do("POST", "/v2.1/servers", "2.90", body).want(t, http.StatusAccepted)
	srv := obj(t, r.body, "server")
	id, _ := srv["id"].(string)
	if len(id) != 36 {
		t.Fatalf("id %q", id)
	}
	if srv["OS-DCF:diskConfig"] != "AUTO" || len(srv["links"].([]any)) != 2 {
		t.Errorf("create answer %s", r.raw)
	}
	if !strings.HasSuffix(r.header.Get("Location"), "/v2.1/servers/"+id) {
		t.Errorf("Location %q", r.header.Get("Location"))
	}
	if len(f.kicks) != 1 || f.kicks[0].listed != 1 {
		t.Fatalf("kicks %+v: want one kick that already sees the committed row", f.kicks)
	}
	got, err := f.store.GetServer(context.Background(), id)
	if err != nil {
		t.Fatalf("stored server: %v", err)
	}
	reqID := r.header.Get("X-Openstack-Request-Id")
	if !strings.HasPrefix(reqID, "req-") || got.CreateRequestID != reqID {
		t.Errorf("create request id %q, header %q", got.CreateRequestID, reqID)
	}
	want := lifecycle.Spec{FlavorID: "1", ImageID: imageID, ResourceClass: "baremetal",
		ImageSource: "http://images/debian-12.qcow2", ImageChecksum: "0123456789abcdef0123456789abcdef",
		RootGB: 40, Networks: []string{netID}, Metadata: map[string]string{"a": "b"},
		UserData: "dm0K", Hostname: "h4", KeyName: "k1"}
	if g := got.Spec; g.FlavorID != want.FlavorID || g.ImageID != want.ImageID || g.ResourceClass != want.ResourceClass ||
		g.ImageSource != want.ImageSource || g.ImageChecksum != want.ImageChecksum || g.RootGB != want.RootGB ||
		len(g.Networks) != 1 || g.Networks[0] != netID || g.Metadata["a"] != "b" || g.UserData != want.UserData ||
		g.Hostname != want.Hostname || g.KeyName != want.KeyName {
		t.Errorf("spec %+v, want %+v", g, want)
	}
	if got.Desired != lifecycle.DesiredActive || got.Phase != lifecycle.PhasePending ||
		!got.Deadline.Equal(t0.Add(buildLimit)) || !got.CreatedAt.Equal(t0) {
		t.Errorf("record %+v", got)
	}
	acts := f.do("GET", "/v2.1/servers/"+id+"/os-instance-actions", "2.90", nil).want(t, 200)
	a := list(t, acts.body, "instanceActions")
	if len(a) != 1 || a[0].(map[string]any)["request_id"] != reqID || a[0].(map[string]any)["action"] != "create" {
		t.Errorf("actions %s", acts.raw)
	}
}

func TestCreateNetworkChoices(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		mv       string
		networks any // nil: omitted
		want     []string
	}{
		{"2.90", "auto", []string{netID}},
		{"2.90", "none", nil},
		// Omitted is "auto" below 2.37, where the OpenStack CLI leaves the
		// member out when no --network is given, and (leniently) above.
		{"2.1", nil, []string{netID}},
		{"2.36", nil, []string{netID}},
		{"2.37", nil, []string{netID}},
		{"2.90", nil, []string{netID}},
		{"2.90", []any{}, nil},
		{"2.90", []any{map[string]any{"uuid": strings.ToUpper(net2ID)}, map[string]any{"uuid": netID}}, []string{net2ID, netID}},
	}
	for i, c := range cases {
		body := validCreate()
		if c.networks == nil {
			delete(body["server"].(map[string]any), "networks")
		} else {
			body["server"].(map[string]any)["networks"] = c.networks
		}
		r := f.do("POST", "/v2.1/servers", c.mv, body).want(t, http.StatusAccepted)
		got, err := f.store.GetServer(context.Background(), obj(t, r.body, "server")["id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got.Spec.Networks, ",") != strings.Join(c.want, ",") {
			t.Errorf("case %d (%s, %v): networks %v, want %v", i, c.mv, c.networks, got.Spec.Networks, c.want)
		}
	}
}

func TestShowUnknownAndNames(t *testing.T) {
	f := newFixture(t)
	f.create("vm1")
	for _, p := range []string{"vm1", unknownID, "not-a-uuid", "00000000000000000000000000000000"} {
		msg := f.do("GET", "/v2.1/servers/"+p, "2.90", nil).novaError(t, 404, "itemNotFound")
		if !strings.Contains(msg, p) {
			t.Errorf("message %q does not name %q", msg, p)
		}
		f.do("DELETE", "/v2.1/servers/"+p, "2.90", nil).novaError(t, 404, "itemNotFound")
	}
	// The CLI's second step of a name look-up: the non-detail list.
	r := f.do("GET", "/v2.1/servers?name=vm1", "2.90", nil).want(t, 200)
	l := list(t, r.body, "servers")
	if len(l) != 1 || l[0].(map[string]any)["name"] != "vm1" || l[0].(map[string]any)["id"] == "" {
		t.Fatalf("name look-up %s", r.raw)
	}
	if l := list(t, f.do("GET", "/v2.1/servers?name=nothere", "2.90", nil).want(t, 200).body, "servers"); len(l) != 0 {
		t.Fatalf("name filter matched %v", l)
	}
}

func TestDeleteLifecycle(t *testing.T) {
	f := newFixture(t)
	id := f.create("doomed")
	f.advance(id, func(s *lifecycle.Server) {
		s.Phase, s.NodeID = lifecycle.PhaseDeploying, "node-1"
	})
	r := f.do("DELETE", "/v2.1/servers/"+id, "2.90", nil).want(t, http.StatusNoContent)
	delReq := r.header.Get("X-Openstack-Request-Id")
	if len(r.raw) != 0 {
		t.Errorf("204 with a body %q", r.raw)
	}
	if len(f.kicks) != 2 {
		t.Errorf("kicks %d, want 2 (create, delete)", len(f.kicks))
	}
	stored, err := f.store.GetServer(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Phase != lifecycle.PhaseDeploying || stored.Desired != lifecycle.DesiredDeleted || stored.DeleteRequestID != delReq {
		t.Fatalf("stored after delete: phase %s desired %s delete request %q", stored.Phase, stored.Desired, stored.DeleteRequestID)
	}
	// Delete accepted, phase not yet deleted: the status it had with
	// task_state deleting, as Nova shows it (I2).
	show := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.90", nil).want(t, 200).body, "server")
	if show["status"] != "BUILD" || show["OS-EXT-STS:task_state"] != "deleting" || show["OS-EXT-STS:vm_state"] != "building" {
		t.Errorf("after delete: status %v task %v vm %v", show["status"], show["OS-EXT-STS:task_state"], show["OS-EXT-STS:vm_state"])
	}
	// A repeated delete is accepted and changes nothing.
	f.do("DELETE", "/v2.1/servers/"+id, "2.90", nil).want(t, http.StatusNoContent)
	// The listing agrees.
	for _, q := range []string{"?status=BUILD", "?status=build", ""} {
		l := list(t, f.do("GET", "/v2.1/servers/detail"+q, "2.90", nil).want(t, 200).body, "servers")
		if len(l) != 1 || l[0].(map[string]any)["OS-EXT-STS:task_state"] != "deleting" {
			t.Errorf("list%s: %v", q, l)
		}
	}
	for _, q := range []string{"?status=DELETED", "?status=ACTIVE"} {
		if l := list(t, f.do("GET", "/v2.1/servers/detail"+q, "2.90", nil).want(t, 200).body, "servers"); len(l) != 0 {
			t.Errorf("list%s lists a server being deleted from BUILD: %v", q, l)
		}
	}

	// The reconciler finishes: 404 from then on, for show and delete.
	f.advance(id, func(s *lifecycle.Server) {
		s.Phase, s.NodeID = lifecycle.PhaseDeleted, ""
	})
	f.do("GET", "/v2.1/servers/"+id, "2.90", nil).novaError(t, 404, "itemNotFound")
	f.do("DELETE", "/v2.1/servers/"+id, "2.90", nil).novaError(t, 404, "itemNotFound")
	if l := list(t, f.do("GET", "/v2.1/servers/detail", "2.90", nil).want(t, 200).body, "servers"); len(l) != 0 {
		t.Errorf("deleted server listed: %v", l)
	}
	// Where Nova lists deleted servers, it shows DELETED.
	for _, q := range []string{"?status=DELETED", "?changes-since=1970-01-01T00:00:00Z"} {
		l := list(t, f.do("GET", "/v2.1/servers/detail"+q, "2.90", nil).want(t, 200).body, "servers")
		if len(l) != 1 || l[0].(map[string]any)["status"] != "DELETED" {
			t.Errorf("list%s after the delete: %v", q, l)
		}
	}

	// Its story stays readable.
	acts := list(t, f.do("GET", "/v2.1/servers/"+id+"/os-instance-actions", "2.90", nil).want(t, 200).body, "instanceActions")
	if len(acts) != 2 {
		t.Fatalf("actions %v", acts)
	}
	names := map[string]string{}
	for _, a := range acts {
		m := a.(map[string]any)
		names[m["action"].(string)] = m["request_id"].(string)
		if m["instance_uuid"] != id || m["start_time"] == "" || m["updated_at"] == nil {
			t.Errorf("action %v", m)
		}
	}
	if names["delete"] != delReq || names["create"] == "" {
		t.Fatalf("actions %v", names)
	}
	detail := obj(t, f.do("GET", "/v2.1/servers/"+id+"/os-instance-actions/"+names["create"], "2.90", nil).want(t, 200).body, "instanceAction")
	evs := detail["events"].([]any)
	if len(evs) != 2 {
		t.Fatalf("create events %v", evs)
	}
	ev := evs[0].(map[string]any)
	if ev["event"] != "test_step" || ev["result"] != "Success" || ev["host"] != "node-1" || ev["hostId"] == "" ||
		ev["start_time"] != "2026-11-30T01:00:00.000000" {
		t.Errorf("event %v", ev)
	}
	if _, ok := ev["details"]; !ok {
		t.Errorf("details missing at 2.90: %v", ev)
	}
	if _, ok := ev["traceback"]; !ok {
		t.Errorf("traceback missing: %v", ev)
	}
	// Older microversions omit host (2.62) and details (2.84).
	old := obj(t, f.do("GET", "/v2.1/servers/"+id+"/os-instance-actions/"+names["create"], "2.51", nil).want(t, 200).body, "instanceAction")
	ev = old["events"].([]any)[0].(map[string]any)
	if _, ok := ev["host"]; ok {
		t.Errorf("host at 2.51: %v", ev)
	}
	f.do("GET", "/v2.1/servers/"+id+"/os-instance-actions/req-nope", "2.90", nil).novaError(t, 404, "itemNotFound")
	f.do("GET", "/v2.1/servers/"+unknownID+"/os-instance-actions", "2.90", nil).novaError(t, 404, "itemNotFound")
}

func TestServerActions(t *testing.T) {
	f := newFixture(t)
	id := f.create("vm1")
	f.do("POST", "/v2.1/servers/"+id+"/action", "2.90", `{"resize": {"flavorRef": "2"}}`).novaError(t, 409, "conflictingRequest")
	f.do("POST", "/v2.1/servers/"+id+"/action", "2.90", `{"reboot": {"type": "HARD"}}`).novaError(t, 409, "conflictingRequest")
	f.do("POST", "/v2.1/servers/"+id+"/action", "2.90", `{}`).novaError(t, 400, "badRequest")
	f.do("POST", "/v2.1/servers/"+id+"/action", "2.90", `[`).novaError(t, 400, "badRequest")
	f.do("POST", "/v2.1/servers/"+unknownID+"/action", "2.90", `{"forceDelete": null}`).novaError(t, 404, "itemNotFound")
	if s, _ := f.store.GetServer(context.Background(), id); s.Desired != lifecycle.DesiredActive {
		t.Fatalf("a rejected action changed the server: desired %s", s.Desired)
	}
	f.do("POST", "/v2.1/servers/"+id+"/action", "2.90", `{"forceDelete": null}`).want(t, http.StatusAccepted)
	if s, _ := f.store.GetServer(context.Background(), id); s.Desired != lifecycle.DesiredDeleted {
		t.Fatalf("forceDelete: desired %s", s.Desired)
	}
}

// TestConcurrentRequests runs creates, shows, lists and deletes from
// several clients at once: every answer is the expected one (SQLite's
// single writer must never surface as a 500).
func TestConcurrentRequests(t *testing.T) {
	f := newFixture(t)
	const workers, rounds = 6, 8
	errs := make(chan string, workers*rounds*5)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				body := validCreate()
				body["server"].(map[string]any)["name"] = fmt.Sprintf("w%d-%d", w, i)
				buf, _ := json.Marshal(body)
				check := func(method, path string, body []byte, want int) []byte {
					req, _ := http.NewRequest(method, f.url+path, bytes.NewReader(body))
					req.Header.Set("X-OpenStack-Nova-API-Version", "2.90")
					if body != nil {
						req.Header.Set("Content-Type", "application/json")
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						errs <- err.Error()
						return nil
					}
					defer resp.Body.Close()
					raw, _ := io.ReadAll(resp.Body)
					if resp.StatusCode != want {
						errs <- fmt.Sprintf("%s %s: %d %s", method, path, resp.StatusCode, raw)
					}
					return raw
				}
				raw := check("POST", "/v2.1/servers", buf, http.StatusAccepted)
				var created struct{ Server struct{ ID string } }
				if json.Unmarshal(raw, &created) != nil || created.Server.ID == "" {
					errs <- fmt.Sprintf("create answer %q", raw)
					continue
				}
				id := created.Server.ID
				check("GET", "/v2.1/servers/"+id, nil, http.StatusOK)
				check("GET", "/v2.1/servers/detail?limit=5", nil, http.StatusOK)
				check("DELETE", "/v2.1/servers/"+id, nil, http.StatusNoContent)
				check("GET", "/v2.1/servers/"+id+"/os-instance-actions", nil, http.StatusOK)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := f.serverCount(); n != workers*rounds {
		t.Errorf("%d servers stored, want %d", n, workers*rounds)
	}
}

// TestCreateAutoWithoutNetworks: "auto" and an omitted networks member give
// no network (rather than an error) when none is configured.
func TestCreateAutoWithoutNetworks(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ingot.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	srv := httptest.NewServer(api.New(api.Config{Store: st, Catalog: testCatalog()}))
	t.Cleanup(srv.Close)
	f := &fixture{t: t, store: st, url: srv.URL}
	for _, networks := range []any{nil, "auto"} {
		body := validCreate()
		if networks == nil {
			delete(body["server"].(map[string]any), "networks")
		} else {
			body["server"].(map[string]any)["networks"] = networks
		}
		r := f.do("POST", "/v2.1/servers", "2.1", body).want(t, http.StatusAccepted)
		got, err := st.GetServer(ctx, obj(t, r.body, "server")["id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Spec.Networks) != 0 {
			t.Errorf("networks %v: got %v, want none", networks, got.Spec.Networks)
		}
	}
}
