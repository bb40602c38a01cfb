package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

func TestExtensions(t *testing.T) {
	f := newFixture(t)
	l := list(t, f.doWith(member, "GET", "/v2.1/extensions", "2.1", nil).want(t, 200).body, "extensions")
	var hosts bool
	prev := ""
	for _, e := range l {
		checkMembers(t, "extension", e, []string{"alias", "name", "description", "namespace", "updated", "links"})
		m := e.(map[string]any)
		hosts = hosts || m["name"] == "Hosts"
		if a := m["alias"].(string); a < prev {
			t.Errorf("extensions not sorted by alias: %s after %s", a, prev)
		} else {
			prev = a
		}
	}
	if !hosts || len(l) < 90 {
		t.Errorf("%d extensions, Hosts listed %v", len(l), hosts)
	}
	e := obj(t, f.do("GET", "/v2.1/extensions/os-consoles", "2.90", nil).want(t, 200).body, "extension")
	if e["alias"] != "os-consoles" || e["name"] != "Consoles" {
		t.Errorf("os-consoles: %v", e)
	}
	f.do("GET", "/v2.1/extensions/os-nothing", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
}

func TestServerIPsByNetwork(t *testing.T) {
	f := newFixture(t)
	id := f.activeServer("vm")
	if err := f.store.CreatePort(context.Background(), store.Port{ID: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", ServerID: id,
		NetworkID: netID, IP: "10.0.0.11", MAC: "52:54:00:00:00:01", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	r := f.doWith(member, "GET", "/v2.1/servers/"+id+"/ips/provisioning", "2.1", nil).want(t, 200)
	checkMembers(t, "ips/provisioning", r.body, []string{"provisioning"})
	a := list(t, r.body, "provisioning")
	if len(a) != 1 {
		t.Fatalf("addresses %v", a)
	}
	checkMembers(t, "address", a[0], []string{"addr", "version"})
	all := obj(t, f.do("GET", "/v2.1/servers/"+id+"/ips", "2.90", nil).want(t, 200).body, "addresses")
	checkMembers(t, "ips address", list(t, all, "provisioning")[0], []string{"addr", "version"})
	f.do("GET", "/v2.1/servers/"+id+"/ips/elsewhere", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.doWith(stranger, "GET", "/v2.1/servers/"+id+"/ips/provisioning", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.do("GET", "/v2.1/servers/"+unknownID+"/ips/provisioning", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
}

func TestMigrationsAreEmpty(t *testing.T) {
	f := newFixture(t)
	for _, mv := range []string{"2.1", "2.23", "2.59", "2.80", "2.90"} {
		r := f.do("GET", "/v2.1/os-migrations", mv, nil).want(t, 200)
		checkMembers(t, "migrations at "+mv, r.body, []string{"migrations"})
		if l := list(t, r.body, "migrations"); len(l) != 0 {
			t.Errorf("migrations %v", l)
		}
	}
	// Query validation from 2.59 only (Nova's schema before it takes anything).
	f.do("GET", "/v2.1/os-migrations?limit=x&marker=m", "2.58", nil).want(t, 200)
	f.do("GET", "/v2.1/os-migrations?limit=-1", "2.59", nil).novaError(t, 400, "badRequest")
	f.do("GET", "/v2.1/os-migrations?marker="+unknownID, "2.59", nil).novaError(t, 400, "badRequest")
	f.do("GET", "/v2.1/os-migrations?changes-since=yesterday", "2.59", nil).novaError(t, 400, "badRequest")
	f.do("GET", "/v2.1/os-migrations?changes-before=yesterday", "2.65", nil).want(t, 200)
	f.do("GET", "/v2.1/os-migrations?changes-before=yesterday", "2.66", nil).novaError(t, 400, "badRequest")
	f.doWith(member, "GET", "/v2.1/os-migrations", "2.1", nil).novaError(t, 403, "forbidden")
}

// TestVersionsListHasV20: Nova lists v2.0 first, and its self link answers
// the v2.0 document.
func TestVersionsListHasV20(t *testing.T) {
	f := newFixture(t)
	vs := list(t, f.do("GET", "/", "", nil).want(t, 200).body, "versions")
	if len(vs) != 2 {
		t.Fatalf("versions %v", vs)
	}
	for _, v := range vs {
		checkMembers(t, "version entry", v, []string{"id", "status", "version", "min_version", "updated", "links"})
	}
	v20, v21 := vs[0].(map[string]any), vs[1].(map[string]any)
	if v20["id"] != "v2.0" || v20["status"] != "SUPPORTED" || v21["id"] != "v2.1" || v21["status"] != "CURRENT" {
		t.Errorf("versions %v", vs)
	}
	for _, v := range vs {
		self := v.(map[string]any)["links"].([]any)[0].(map[string]any)
		path := strings.TrimPrefix(self["href"].(string), f.url)
		doc := obj(t, f.do("GET", path, "", nil).want(t, 200).body, "version")
		checkMembers(t, "version document "+path, doc, []string{"id", "status", "version", "min_version", "updated", "links", "media-types"})
		if got := doc["links"].([]any)[0].(map[string]any)["href"]; got != self["href"] {
			t.Errorf("%s: self link %v, want %v", path, got, self["href"])
		}
	}
	f.do("GET", "/v2", "", nil).want(t, 200)
}

// TestSimpleTenantUsage: hours and sizes over the period, per project;
// detailed lists the servers; a member sees only its own project's.
func TestSimpleTenantUsage(t *testing.T) {
	f := newFixture(t)
	id := f.create("vm")
	f.advance(id, func(s *lifecycle.Server) {
		s.Phase, s.NodeID, s.LaunchedAt = lifecycle.PhaseActive, "node-1", t0
	})
	f.create("never-launched")
	f.clock.Advance(2 * time.Hour)
	q := "?start=2026-11-30T00:00:00&end=2026-11-30T03:00:00"
	r := f.do("GET", "/v2.1/os-simple-tenant-usage"+q, "2.1", nil).want(t, 200)
	checkMembers(t, "tenant usage list", r.body, []string{"tenant_usages"})
	us := list(t, r.body, "tenant_usages")
	if len(us) != 1 {
		t.Fatalf("usages %v", us)
	}
	checkMembers(t, "tenant usage", us[0], []string{"tenant_id", "start", "stop", "total_hours", "total_local_gb_usage",
		"total_memory_mb_usage", "total_vcpus_usage"})
	u := us[0].(map[string]any)
	// Launched at 01:00, period ends 03:00: 2 hours of bm.small (2 vCPUs, 4096 MB, 40 GB).
	if u["tenant_id"] != "ingot" || u["total_hours"] != 2.0 || u["total_vcpus_usage"] != 4.0 ||
		u["total_memory_mb_usage"] != 8192.0 || u["total_local_gb_usage"] != 80.0 ||
		u["start"] != "2026-11-30T00:00:00" || u["stop"] != "2026-11-30T03:00:00" {
		t.Errorf("usage %v", u)
	}
	d := list(t, f.do("GET", "/v2.1/os-simple-tenant-usage"+q+"&detailed=1", "2.1", nil).want(t, 200).body, "tenant_usages")
	su := list(t, d[0], "server_usages")
	if len(su) != 1 {
		t.Fatalf("server usages %v", su)
	}
	checkMembers(t, "server usage", su[0], []string{"ended_at", "flavor", "hours", "instance_id", "local_gb", "memory_mb",
		"name", "started_at", "state", "tenant_id", "uptime", "vcpus"})
	if s := su[0].(map[string]any); s["instance_id"] != id || s["flavor"] != "bm.small" || s["state"] != "active" ||
		s["started_at"] != "2026-11-30T01:00:00" || s["ended_at"] != nil || s["uptime"] != 7200.0 {
		t.Errorf("server usage %v", s)
	}
	// Show: the member's own project, always with server_usages.
	own := obj(t, f.doWith(member, "GET", "/v2.1/os-simple-tenant-usage/ingot"+q, "2.1", nil).want(t, 200).body, "tenant_usage")
	if _, ok := own["server_usages"]; !ok || own["total_hours"] != 2.0 {
		t.Errorf("show %v", own)
	}
	// A deleted server counts until its delete (at 03:00).
	f.do("DELETE", "/v2.1/servers/"+id, "2.1", nil).want(t, http.StatusNoContent)
	f.clock.Advance(time.Hour)
	later := "?start=2026-11-30T00:00:00&end=2026-11-30T05:00:00"
	del := list(t, obj(t, f.do("GET", "/v2.1/os-simple-tenant-usage/ingot"+later, "2.1", nil).want(t, 200).body, "tenant_usage"), "server_usages")
	if s := del[0].(map[string]any); s["state"] != "terminated" || s["hours"] != 2.0 || s["ended_at"] != "2026-11-30T03:00:00" || s["uptime"] != 7200.0 {
		t.Errorf("deleted server usage %v", s)
	}
	empty := f.do("GET", "/v2.1/os-simple-tenant-usage/nobody"+q, "2.1", nil).want(t, 200)
	if u := obj(t, empty.body, "tenant_usage"); len(u) != 0 {
		t.Errorf("a project without usage: %v", u)
	}
	// Policy and bad input.
	f.doWith(member, "GET", "/v2.1/os-simple-tenant-usage", "2.1", nil).novaError(t, 403, "forbidden")
	f.doWith(stranger, "GET", "/v2.1/os-simple-tenant-usage/ingot", "2.1", nil).novaError(t, 403, "forbidden")
	f.do("GET", "/v2.1/os-simple-tenant-usage?start=2026-11-30T05:00:00&end=2026-11-30T03:00:00", "2.1", nil).novaError(t, 400, "badRequest")
	f.do("GET", "/v2.1/os-simple-tenant-usage?start=yesterday", "2.1", nil).novaError(t, 400, "badRequest")
	// Paging from 2.40: limit counts servers, with a next link.
	f.do("GET", "/v2.1/os-simple-tenant-usage?limit=x", "2.39", nil).want(t, 200)
	f.do("GET", "/v2.1/os-simple-tenant-usage?limit=x", "2.40", nil).novaError(t, 400, "badRequest")
	paged := f.do("GET", "/v2.1/os-simple-tenant-usage"+q+"&limit=1", "2.40", nil).want(t, 200)
	if _, ok := paged.body["tenant_usages_links"]; !ok {
		t.Errorf("a full page without a next link: %s", paged.raw)
	}
}

func TestInstanceUsageAuditLog(t *testing.T) {
	f := newFixture(t)
	members := []string{"hosts_not_run", "log", "num_hosts", "num_hosts_done", "num_hosts_not_run", "num_hosts_running",
		"overall_status", "period_beginning", "period_ending", "total_errors", "total_instances"}
	r := f.do("GET", "/v2.1/os-instance_usage_audit_log", "2.1", nil).want(t, 200)
	checkMembers(t, "audit log list", r.body, []string{"instance_usage_audit_logs"})
	l := obj(t, r.body, "instance_usage_audit_logs")
	checkMembers(t, "audit log", l, members)
	// The clock is 2026-11-30 01:00: the last completed month is October.
	if l["period_beginning"] != "2026-10-01 00:00:00" || l["period_ending"] != "2026-11-01 00:00:00" || l["num_hosts"] != 1.0 {
		t.Errorf("audit log %v", l)
	}
	for before, begin := range map[string]string{
		"2026-03-15 10:00:00":        "2026-02-01 00:00:00",
		"2026-03-01 00:00:00":        "2026-01-01 00:00:00", // the first instant of a month: one further back
		"2026-01-10 08:30:00.123456": "2025-12-01 00:00:00",
	} {
		s := obj(t, f.do("GET", "/v2.1/os-instance_usage_audit_log/"+strings.ReplaceAll(before, " ", "%20"), "2.1", nil).want(t, 200).body, "instance_usage_audit_log")
		checkMembers(t, "audit log show", s, members)
		if s["period_beginning"] != begin {
			t.Errorf("before %s: begins %v, want %s", before, s["period_beginning"], begin)
		}
	}
	f.do("GET", "/v2.1/os-instance_usage_audit_log/invalid_time", "2.1", nil).novaError(t, 400, "badRequest")
	f.doWith(member, "GET", "/v2.1/os-instance_usage_audit_log", "2.1", nil).novaError(t, 403, "forbidden")
	f.doWith(member, "GET", "/v2.1/os-instance_usage_audit_log/2026-03-15%2010:00:00", "2.1", nil).novaError(t, 403, "forbidden")
}

func TestAvailabilityZoneDetailIsForAdmins(t *testing.T) {
	f := newFixture(t)
	f.doWith(member, "GET", "/v2.1/os-availability-zone/detail", "2.1", nil).novaError(t, 403, "forbidden")
	z := list(t, f.doWith(member, "GET", "/v2.1/os-availability-zone", "2.1", nil).want(t, 200).body, "availabilityZoneInfo")
	checkMembers(t, "zone", z[0], []string{"zoneName", "zoneState", "hosts"})
	if z[0].(map[string]any)["hosts"] != nil {
		t.Errorf("hosts in the plain list: %v", z)
	}
	d := list(t, f.do("GET", "/v2.1/os-availability-zone/detail", "2.1", nil).want(t, 200).body, "availabilityZoneInfo")
	checkMembers(t, "zone detail", d[0], []string{"zoneName", "zoneState", "hosts"})
}
