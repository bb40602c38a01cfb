package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// seed stores n ACTIVE servers with one port each, straight into the store.
func seed(b *testing.B, f *fixture, n int) []string {
	b.Helper()
	ctx := context.Background()
	ids := make([]string, n)
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		s := &lifecycle.Server{ID: uuid.NewString(), Name: fmt.Sprintf("vm-%05d", i), ProjectID: "ingot", UserID: "ingot",
			Spec: lifecycle.Spec{FlavorID: "1", ImageID: imageID, ResourceClass: "baremetal",
				ImageSource: "http://images/debian-12.qcow2", RootGB: 40, Networks: []string{netID},
				Metadata: map[string]string{"team": "bench"}},
			Desired: lifecycle.DesiredActive, Phase: lifecycle.PhaseActive, NodeID: fmt.Sprintf("node-%05d", i),
			DeployRequested: true, PortsAllocated: true,
			CreatedAt: at, UpdatedAt: at, PhaseSince: at, LaunchedAt: at, Deadline: at.Add(time.Hour),
			CreateRequestID: "req-" + uuid.NewString()}
		if err := f.store.CreateServer(ctx, s); err != nil {
			b.Fatal(err)
		}
		if err := f.store.CreatePort(ctx, store.Port{ID: uuid.NewString(), ServerID: s.ID, NetworkID: netID,
			IP: fmt.Sprintf("10.0.%d.%d", i/250, i%250+1), MAC: fmt.Sprintf("52:54:00:00:%02x:%02x", i/256, i%256),
			CreatedAt: at}); err != nil {
			b.Fatal(err)
		}
		ids[i] = s.ID
	}
	return ids
}

// cpuPerOp reports the process's CPU time (user and system, GC included)
// per op of the loop that follows: steadier than wall time on a shared
// machine.
func cpuPerOp(b *testing.B) {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	b.Cleanup(func() { b.ReportMetric(float64((cpu()-start).Nanoseconds())/float64(b.N), "cpu-ns/op") })
}

func serve(b *testing.B, h http.Handler, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("X-OpenStack-Nova-API-Version", "2.90")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
	}
	return rec
}

// BenchmarkServerShow: GET /v2.1/servers/{id} at 2.90 among 1,000 servers.
func BenchmarkServerShow(b *testing.B) {
	f := newFixture(b)
	ids := seed(b, f, 1000)
	i := 0
	cpuPerOp(b)
	for b.Loop() {
		serve(b, f.api, "/v2.1/servers/"+ids[i%len(ids)])
		i++
	}
}

// BenchmarkServerList: GET /v2.1/servers/detail, pages of 1,000 over
// 10,000 servers (one op = one page, walking the pages by marker).
func BenchmarkServerList(b *testing.B) {
	f := newFixture(b)
	ids := seed(b, f, 10000)
	page := 0
	var bytes int
	for b.Loop() {
		path := "/v2.1/servers/detail?limit=1000"
		if page > 0 {
			path += "&marker=" + ids[page*1000-1]
		}
		rec := serve(b, f.api, path)
		bytes = rec.Body.Len()
		page = (page + 1) % 10
	}
	b.ReportMetric(float64(bytes)/1000, "B/server")
}

// BenchmarkServerListPage: GET /v2.1/servers/detail?limit=50 among 1,000
// servers, the page a dashboard asks for (the API load benchmark's list).
func BenchmarkServerListPage(b *testing.B) {
	f := newFixture(b)
	seed(b, f, 1000)
	cpuPerOp(b)
	for b.Loop() {
		serve(b, f.api, "/v2.1/servers/detail?limit=50")
	}
}

// BenchmarkServerCreate: POST /v2.1/servers (validation, one committed
// insert of the server and its create action, the answer).
func BenchmarkServerCreate(b *testing.B) {
	f := newFixture(b)
	body := `{"server": {"name": "bench", "imageRef": "` + imageID + `", "flavorRef": "1", "networks": [{"uuid": "` + netID + `"}]}}`
	for b.Loop() {
		req := httptest.NewRequest("POST", "/v2.1/servers", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-OpenStack-Nova-API-Version", "2.90")
		rec := httptest.NewRecorder()
		f.api.ServeHTTP(rec, req)
		if rec.Code != http.StatusAccepted {
			b.Fatalf("create: %d %s", rec.Code, rec.Body.String())
		}
	}
}
