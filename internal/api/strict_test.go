package api_test

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// The member sets below are Nova's server bodies per microversion, as its
// API reference describes them and as Tempest's response schemas check them
// (every one of which refuses a member it does not name). They are written
// out here, not derived from the renderer, so that an extra member (such as
// an ingot extension sent unasked) or a missing one fails.

// serverKind is which answer carries the server.
type serverKind string

const (
	kindShow    serverKind = "show"    // GET /servers/{id}
	kindDetail  serverKind = "detail"  // GET /servers/detail
	kindUpdate  serverKind = "update"  // PUT /servers/{id}
	kindRebuild serverKind = "rebuild" // POST …/action {"rebuild"}
)

var (
	commonMembers = []string{"id", "name", "status", "image", "flavor", "user_id", "tenant_id", "created",
		"updated", "metadata", "links", "addresses", "hostId", "OS-DCF:diskConfig", "accessIPv4", "accessIPv6"}
	detailMembers = []string{"key_name", "security_groups", "OS-SRV-USG:launched_at", "OS-SRV-USG:terminated_at",
		"OS-EXT-AZ:availability_zone", "OS-EXT-STS:task_state", "OS-EXT-STS:vm_state", "OS-EXT-STS:power_state",
		"os-extended-volumes:volumes_attached", "config_drive"}
	adminMembers   = []string{"OS-EXT-SRV-ATTR:host", "OS-EXT-SRV-ATTR:instance_name", "OS-EXT-SRV-ATTR:hypervisor_hostname"}
	admin23Members = []string{"OS-EXT-SRV-ATTR:reservation_id", "OS-EXT-SRV-ATTR:launch_index",
		"OS-EXT-SRV-ATTR:kernel_id", "OS-EXT-SRV-ATTR:ramdisk_id", "OS-EXT-SRV-ATTR:hostname",
		"OS-EXT-SRV-ATTR:root_device_name", "OS-EXT-SRV-ATTR:user_data"}
)

// novaServerMembers is the exact member set of a server body.
func novaServerMembers(kind serverKind, minor int, admin bool, status string) []string {
	full := kind == kindShow || kind == kindDetail || minor >= 75 // 2.75: PUT and rebuild answer as GET
	m := slices.Clone(commonMembers)
	if status == "ACTIVE" || status == "BUILD" || status == "REBUILD" {
		m = append(m, "progress")
	}
	if status == "ERROR" {
		m = append(m, "fault")
	}
	add := func(from int, names ...string) {
		if minor >= from {
			m = append(m, names...)
		}
	}
	add(9, "locked")
	add(19, "description")
	add(26, "tags")
	add(63, "trusted_image_certificates")
	add(73, "locked_reason")
	if kind != kindDetail {
		add(71, "server_groups")
	}
	if full {
		m = append(m, detailMembers...)
		if admin {
			m = append(m, adminMembers...)
			add(3, admin23Members...)
			add(16, "host_status")
		} else {
			add(90, "OS-EXT-SRV-ATTR:hostname")
		}
	}
	if kind == kindRebuild {
		m = append(m, "adminPass")
		add(57, "user_data")
		m = slices.DeleteFunc(m, func(k string) bool { return k == "OS-EXT-SRV-ATTR:user_data" })
		if !full {
			add(54, "key_name")
		}
	}
	sort.Strings(m)
	return slices.Compact(m)
}

func memberList(v any) []string {
	o, _ := v.(map[string]any)
	out := make([]string, 0, len(o))
	for k := range o {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkMembers fails unless obj has exactly the members want.
func checkMembers(t *testing.T, what string, obj any, want []string) {
	t.Helper()
	want = slices.Clone(want)
	sort.Strings(want)
	got := memberList(obj)
	if slices.Equal(got, want) {
		return
	}
	var extra, missing []string
	for _, k := range got {
		if !slices.Contains(want, k) {
			extra = append(extra, k)
		}
	}
	for _, k := range want {
		if !slices.Contains(got, k) {
			missing = append(missing, k)
		}
	}
	t.Errorf("%s: extra members %v, missing members %v", what, extra, missing)
}

// checkNested checks the members of the nested objects Nova fixes.
func checkNested(t *testing.T, what string, s map[string]any, kind serverKind, minor int, admin bool) {
	t.Helper()
	full := kind == kindShow || kind == kindDetail || minor >= 75
	if minor >= 47 {
		checkMembers(t, what+" flavor", s["flavor"], []string{"original_name", "vcpus", "ram", "disk", "ephemeral", "swap", "extra_specs"})
	} else {
		checkMembers(t, what+" flavor", s["flavor"], []string{"id", "links"})
	}
	if img, ok := s["image"].(map[string]any); ok {
		checkMembers(t, what+" image", img, []string{"id", "links"})
	}
	addrWant := []string{"addr", "version"}
	if full {
		addrWant = append(addrWant, "OS-EXT-IPS:type", "OS-EXT-IPS-MAC:mac_addr")
	}
	addrs, _ := s["addresses"].(map[string]any)
	for net, l := range addrs {
		for _, a := range l.([]any) {
			checkMembers(t, what+" address on "+net, a, addrWant)
		}
	}
	if f, ok := s["fault"]; ok {
		want := []string{"code", "created", "message"}
		if admin {
			want = append(want, "details")
		}
		checkMembers(t, what+" fault", f, want)
	}
	if vols, ok := s["os-extended-volumes:volumes_attached"].([]any); ok {
		want := []string{"id"}
		if minor >= 3 {
			want = append(want, "delete_on_termination")
		}
		for _, v := range vols {
			checkMembers(t, what+" volume", v, want)
		}
	}
}

// TestServerBodiesCarryExactlyNovasMembers renders servers in each state
// and answer at every microversion where Nova's body changes, for an admin
// and for a member, and compares the members with Nova's.
func TestServerBodiesCarryExactlyNovasMembers(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	active := f.activeServer("active")
	if err := f.store.CreatePort(ctx, store.Port{ID: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", ServerID: active,
		NetworkID: netID, IP: "10.0.0.11", MAC: "52:54:00:00:00:01", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	building := f.create("building")
	f.advance(building, func(s *lifecycle.Server) { s.Phase = lifecycle.PhaseDeploying })
	broken := f.create("broken")
	f.advance(broken, func(s *lifecycle.Server) {
		s.Phase = lifecycle.PhaseError
		s.Fault = &lifecycle.Fault{Reason: lifecycle.ReasonDeployFailed, Message: "deploy failed", At: t0.Add(time.Minute)}
	})
	stopped := f.activeServer("stopped")
	f.advance(stopped, func(s *lifecycle.Server) { s.Phase = lifecycle.PhaseStopped })
	rebuilt := f.activeServer("rebuilt")
	status := map[string]string{active: "ACTIVE", building: "BUILD", broken: "ERROR", stopped: "SHUTOFF"}

	who := map[string]http.Header{"admin": nil, "member": member}
	for _, minor := range []int{1, 2, 3, 8, 9, 15, 16, 18, 19, 25, 26, 46, 47, 53, 54, 56, 57, 62, 63, 70, 71, 72,
		73, 74, 75, 89, 90, 92} {
		mv := "2." + strconv.Itoa(minor)
		for role, h := range who {
			admin := role == "admin"
			t.Run(mv+"/"+role, func(t *testing.T) {
				for id, st := range status {
					r := f.doWith(h, "GET", "/v2.1/servers/"+id, mv, nil).want(t, http.StatusOK)
					s := obj(t, r.body, "server")
					if s["status"] != st {
						t.Fatalf("%s: status %v, want %s", id, s["status"], st)
					}
					checkMembers(t, "show "+st, s, novaServerMembers(kindShow, minor, admin, st))
					checkNested(t, "show "+st, s, kindShow, minor, admin)
				}
				for _, e := range list(t, f.doWith(h, "GET", "/v2.1/servers/detail", mv, nil).want(t, http.StatusOK).body, "servers") {
					s := e.(map[string]any)
					st := s["status"].(string)
					if s["id"] == rebuilt {
						continue // its status depends on the rebuild case below
					}
					checkMembers(t, "detail "+st, s, novaServerMembers(kindDetail, minor, admin, st))
					checkNested(t, "detail "+st, s, kindDetail, minor, admin)
				}
				put := f.doWith(h, "PUT", "/v2.1/servers/"+active, mv, map[string]any{"server": map[string]any{"name": "active"}})
				s := obj(t, put.want(t, http.StatusOK).body, "server")
				checkMembers(t, "update", s, novaServerMembers(kindUpdate, minor, admin, "ACTIVE"))
				checkNested(t, "update", s, kindUpdate, minor, admin)

				f.finishOp(rebuilt, lifecycle.PhaseActive)
				rb := f.action(h, rebuilt, mv, map[string]any{"rebuild": map[string]any{"imageRef": imageID}})
				s = obj(t, rb.want(t, http.StatusAccepted).body, "server")
				checkMembers(t, "rebuild", s, novaServerMembers(kindRebuild, minor, admin, "REBUILD"))
				checkNested(t, "rebuild", s, kindRebuild, minor, admin)
			})
		}
	}
}

// TestExtensionMembersAreOptIn: with X-Ingot-Extensions: true a server
// also carries ingot:phase and ingot:attempts (ingot:fault when failed);
// any other value is no opt-in.
func TestExtensionMembersAreOptIn(t *testing.T) {
	f := newFixture(t)
	id := f.create("vm")
	for v, want := range map[string]bool{"true": true, "1": true, "false": false, "yes please": false, "": false} {
		h := http.Header{"X-Ingot-Extensions": {v}}
		s := obj(t, f.doWith(h, "GET", "/v2.1/servers/"+id, "2.90", nil).want(t, http.StatusOK).body, "server")
		_, phase := s["ingot:phase"]
		_, attempts := s["ingot:attempts"]
		if phase != want || attempts != want {
			t.Errorf("X-Ingot-Extensions %q: ingot:phase %v, ingot:attempts %v, want %v", v, phase, attempts, want)
		}
		d := list(t, f.doWith(h, "GET", "/v2.1/servers/detail", "2.90", nil).want(t, http.StatusOK).body, "servers")
		if _, ok := d[0].(map[string]any)["ingot:phase"]; ok != want {
			t.Errorf("X-Ingot-Extensions %q on /servers/detail: ingot:phase %v", v, ok)
		}
	}
}
