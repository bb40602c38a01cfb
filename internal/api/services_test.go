package api_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
)

var novaUsecRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$`)

func TestServicesList(t *testing.T) {
	f, _ := adminFixture(t)
	base := "binary,disabled_reason,host,id,state,status,updated_at,zone"
	for _, tc := range []struct {
		mv, keys string
		uuid     bool
	}{{"2.1", base, false}, {"2.11", "binary,disabled_reason,forced_down,host,id,state,status,updated_at,zone", false},
		{"2.53", "binary,disabled_reason,forced_down,host,id,state,status,updated_at,zone", true}} {
		ss := list(t, f.do("GET", "/v2.1/os-services", tc.mv, nil).want(t, http.StatusOK).body, "services")
		if len(ss) != 3 {
			t.Fatalf("%s: %d services", tc.mv, len(ss))
		}
		for _, s := range ss {
			s := s.(map[string]any)
			_, isStr := s["id"].(string)
			if keysOf(s) != tc.keys || isStr != tc.uuid || s["state"] != "up" || s["status"] != "enabled" || s["host"] != "replica-a" {
				t.Fatalf("%s: %v", tc.mv, s)
			}
			if zone := map[bool]string{true: "nova", false: "internal"}[s["binary"] == "nova-compute"]; s["zone"] != zone {
				t.Fatalf("%s: zone %v", tc.mv, s)
			}
			// Nova's format, no zone: gophercloud parses it with this layout.
			if at, _ := s["updated_at"].(string); !novaUsecRE.MatchString(at) {
				t.Fatalf("%s: updated_at %q", tc.mv, at)
			}
		}
	}
	if ss := list(t, f.do("GET", "/v2.1/os-services?binary=nova-compute&host=replica-a", "2.1", nil).want(t, http.StatusOK).body, "services"); len(ss) != 1 {
		t.Fatalf("filter: %v", ss)
	}
	for _, q := range []string{"?binary=xxx", "?host=xxx&binary=nova-compute"} {
		if ss := list(t, f.do("GET", "/v2.1/os-services"+q, "2.1", nil).want(t, http.StatusOK).body, "services"); len(ss) != 0 {
			t.Fatalf("%s: %v", q, ss)
		}
	}
	if ss := list(t, f.do("GET", "/v2.1/os-services?xxx=nova-compute", "2.74", nil).want(t, http.StatusOK).body, "services"); len(ss) != 3 {
		t.Fatalf("unknown parameter below 2.75 is ignored: %v", ss)
	}
	f.do("GET", "/v2.1/os-services?xxx=1", "2.75", nil).novaError(t, http.StatusBadRequest, "badRequest")
	// No heartbeat for longer than the down time: down.
	f.clock.Advance(61 * time.Second)
	if s := list(t, f.do("GET", "/v2.1/os-services", "2.1", nil).want(t, http.StatusOK).body, "services")[0].(map[string]any); s["state"] != "down" {
		t.Fatalf("silent service: %v", s)
	}
}

func TestServicesLegacyActions(t *testing.T) {
	f, _ := adminFixture(t)
	body := map[string]any{"host": "replica-a", "binary": "nova-compute"}
	r := f.do("PUT", "/v2.1/os-services/disable", "2.1", body).want(t, http.StatusOK)
	if s := obj(t, r.body, "service"); keysOf(s) != "binary,host,status" || s["status"] != "disabled" {
		t.Fatalf("disable: %s", r.raw)
	}
	r = f.do("PUT", "/v2.1/os-services/disable-log-reason", "2.1",
		map[string]any{"host": "replica-a", "binary": "nova-compute", "disabled_reason": "fans"}).want(t, http.StatusOK)
	if s := obj(t, r.body, "service"); keysOf(s) != "binary,disabled_reason,host,status" || s["disabled_reason"] != "fans" {
		t.Fatalf("disable-log-reason: %s", r.raw)
	}
	r = f.do("PUT", "/v2.1/os-services/enable", "2.1", body).want(t, http.StatusOK)
	if s := obj(t, r.body, "service"); s["status"] != "enabled" {
		t.Fatalf("enable: %s", r.raw)
	}
	if s := list(t, f.do("GET", "/v2.1/os-services?binary=nova-compute", "2.1", nil).body, "services")[0].(map[string]any); s["disabled_reason"] != nil {
		t.Fatalf("enable keeps the reason: %v", s)
	}
	f.do("PUT", "/v2.1/os-services/force-down", "2.10", map[string]any{"host": "replica-a", "binary": "nova-compute", "forced_down": true}).
		novaError(t, http.StatusNotFound, "itemNotFound")
	r = f.do("PUT", "/v2.1/os-services/force-down", "2.11",
		map[string]any{"host": "replica-a", "binary": "nova-compute", "forced_down": true}).want(t, http.StatusOK)
	if s := obj(t, r.body, "service"); keysOf(s) != "binary,forced_down,host" || s["forced_down"] != true {
		t.Fatalf("force-down: %s", r.raw)
	}
	for _, tc := range []struct {
		action string
		body   map[string]any
		status int
	}{
		{"disable", map[string]any{"host": "nohost", "binary": "nova-compute"}, http.StatusNotFound},
		{"disable", map[string]any{"host": "replica-a"}, http.StatusBadRequest},
		{"disable", map[string]any{"host": "replica-a", "binary": "nova-compute", "extra": 1}, http.StatusBadRequest},
		{"disable-log-reason", map[string]any{"host": "replica-a", "binary": "nova-compute"}, http.StatusBadRequest},
		{"force-down", map[string]any{"host": "replica-a", "binary": "nova-compute", "forced_down": "yes"}, http.StatusBadRequest},
		{"reboot", body, http.StatusNotFound},
	} {
		if r := f.do("PUT", "/v2.1/os-services/"+tc.action, "2.11", tc.body); r.status != tc.status {
			t.Errorf("%s %v: %d, want %d (%s)", tc.action, tc.body, r.status, tc.status, r.raw)
		}
	}
	// From 2.53 the action names are not UUIDs.
	f.do("PUT", "/v2.1/os-services/disable", "2.53", map[string]any{"status": "disabled"}).novaError(t, http.StatusBadRequest, "badRequest")
}

func TestServicesUpdate253(t *testing.T) {
	f, _ := adminFixture(t)
	all, _ := f.store.ListServices(context.Background())
	var compute, sched store.Service
	for _, s := range all {
		switch s.Binary {
		case store.BinaryCompute:
			compute = s
		case store.BinaryScheduler:
			sched = s
		}
	}
	path := "/v2.1/os-services/" + compute.UUID
	r := f.do("PUT", path, "2.53", map[string]any{"status": "disabled", "disabled_reason": "maintenance"}).want(t, http.StatusOK)
	s := obj(t, r.body, "service")
	if keysOf(s) != "binary,disabled_reason,forced_down,host,id,state,status,updated_at,zone" || s["id"] != compute.UUID ||
		s["status"] != "disabled" || s["disabled_reason"] != "maintenance" {
		t.Fatalf("update: %s", r.raw)
	}
	s = obj(t, f.do("PUT", path, "2.53", map[string]any{"forced_down": true}).want(t, http.StatusOK).body, "service")
	if s["state"] != "down" || s["status"] != "disabled" || s["forced_down"] != true {
		t.Fatalf("forced down: %v", s)
	}
	s = obj(t, f.do("PUT", path, "2.53", map[string]any{"status": "enabled", "forced_down": false}).want(t, http.StatusOK).body, "service")
	if s["state"] != "up" || s["status"] != "enabled" || s["disabled_reason"] != nil {
		t.Fatalf("enabled: %v", s)
	}
	fake := "/v2.1/os-services/9be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	for _, tc := range []struct {
		path   string
		body   any
		status int
	}{
		{fake, map[string]any{"status": "enabled"}, http.StatusNotFound},
		{fake, map[string]any{"status": "disabled", "disabled_reason": "maintenance"}, http.StatusNotFound},
		{"/v2.1/os-services/12", map[string]any{"status": "enabled"}, http.StatusBadRequest},
		{path, map[string]any{"status": "enabled", "disabled_reason": "x"}, http.StatusBadRequest},
		{path, map[string]any{"disabled_reason": "x"}, http.StatusBadRequest},
		{path, map[string]any{"status": "off"}, http.StatusBadRequest},
		{path, map[string]any{"forced_down": "true"}, http.StatusBadRequest},
		{path, map[string]any{}, http.StatusBadRequest},
		{path, map[string]any{"host": "x"}, http.StatusBadRequest},
		{path, "[]", http.StatusBadRequest},
		{"/v2.1/os-services/" + sched.UUID, map[string]any{"status": "disabled"}, http.StatusBadRequest},
	} {
		if r := f.do("PUT", tc.path, "2.53", tc.body); r.status != tc.status {
			t.Errorf("PUT %s %v: %d, want %d (%s)", tc.path, tc.body, r.status, tc.status, r.raw)
		}
	}
}

func TestServicesDelete(t *testing.T) {
	f, _ := adminFixture(t)
	all, _ := f.store.ListServices(context.Background())
	f.do("DELETE", "/v2.1/os-services/"+all[2].UUID, "2.1", nil).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("DELETE", fmt.Sprint("/v2.1/os-services/", all[2].ID), "2.1", nil).want(t, http.StatusNoContent)
	f.do("DELETE", fmt.Sprint("/v2.1/os-services/", all[2].ID), "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	f.do("DELETE", fmt.Sprint("/v2.1/os-services/", all[1].ID), "2.53", nil).novaError(t, http.StatusBadRequest, "badRequest")
	f.do("DELETE", "/v2.1/os-services/"+all[1].UUID, "2.53", nil).want(t, http.StatusNoContent)
	f.do("DELETE", "/v2.1/os-services/"+all[1].UUID, "2.53", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	if left, _ := f.store.ListServices(context.Background()); len(left) != 1 {
		t.Fatalf("left %+v", left)
	}
}

func TestHosts(t *testing.T) {
	f, held := adminFixture(t)
	hs := list(t, f.do("GET", "/v2.1/os-hosts", "2.42", nil).want(t, http.StatusOK).body, "hosts")
	if len(hs) != 3 {
		t.Fatalf("hosts %v", hs)
	}
	services := map[string]string{}
	for _, h := range hs {
		h := h.(map[string]any)
		services[h["service"].(string)] = h["zone"].(string)
		if keysOf(h) != "host_name,service,zone" || h["host_name"] != "replica-a" {
			t.Fatalf("host %v", h)
		}
	}
	if fmt.Sprint(services) != "map[compute:nova conductor:internal scheduler:internal]" {
		t.Fatalf("services %v", services)
	}
	for q, n := range map[string]int{"?zone=nova": 1, "?zone=": 3, "?zone=xxx": 0} {
		if hs := list(t, f.do("GET", "/v2.1/os-hosts"+q, "2.1", nil).want(t, http.StatusOK).body, "hosts"); len(hs) != n {
			t.Fatalf("%s: %v", q, hs)
		}
	}
	r := f.do("GET", "/v2.1/os-hosts/replica-a", "2.1", nil).want(t, http.StatusOK)
	rows := list(t, r.body, "host")
	if len(rows) != 4 {
		t.Fatalf("host detail: %s", r.raw)
	}
	sv, _ := f.store.GetServer(context.Background(), held)
	for i, want := range []string{"(total)", "(used_now)", "(used_max)", sv.ProjectID} {
		res := rows[i].(map[string]any)["resource"].(map[string]any)
		if res["project"] != want || res["host"] != "replica-a" || keysOf(res) != "cpu,disk_gb,host,memory_mb,project" {
			t.Fatalf("row %d: %v", i, res)
		}
		if i >= 2 && (res["cpu"] != float64(sv.Spec.VCPUs) || res["memory_mb"] != float64(sv.Spec.RAMMB)) {
			t.Fatalf("row %d counts %v, server has %d vcpus", i, res, sv.Spec.VCPUs)
		}
	}
	f.do("GET", "/v2.1/os-hosts/nonexistent_hostname", "2.1", nil).novaError(t, http.StatusNotFound, "itemNotFound")
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
	}{
		{"PUT", "/v2.1/os-hosts/replica-a", map[string]any{"status": "enable"}, http.StatusNotImplemented},
		{"PUT", "/v2.1/os-hosts/replica-a", map[string]any{"maintenance_mode": "disable"}, http.StatusNotImplemented},
		{"PUT", "/v2.1/os-hosts/replica-a", map[string]any{"status": "invalid", "maintenance_mode": "enable"}, http.StatusBadRequest},
		{"PUT", "/v2.1/os-hosts/replica-a", map[string]any{"status": "enable", "maintenance_mode": "invalid"}, http.StatusBadRequest},
		{"PUT", "/v2.1/os-hosts/replica-a", map[string]any{}, http.StatusBadRequest},
		{"PUT", "/v2.1/os-hosts/nonexistent_hostname", map[string]any{"status": "enable", "maintenance_mode": "enable"}, http.StatusNotFound},
		{"GET", "/v2.1/os-hosts/replica-a/startup", nil, http.StatusNotImplemented},
		{"GET", "/v2.1/os-hosts/replica-a/reboot", nil, http.StatusNotImplemented},
		{"GET", "/v2.1/os-hosts/nonexistent_hostname/shutdown", nil, http.StatusNotFound},
		{"GET", "/v2.1/os-hosts", nil, http.StatusNotFound},
	} {
		mv := "2.42"
		if tc.status == http.StatusNotFound && tc.path == "/v2.1/os-hosts" {
			mv = "2.43"
		}
		if r := f.do(tc.method, tc.path, mv, tc.body); r.status != tc.status {
			t.Errorf("%s %s %v at %s: %d, want %d (%s)", tc.method, tc.path, tc.body, mv, r.status, tc.status, r.raw)
		}
	}
}
