package bench

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironicsim"
)

// TestBenchAPI: INGOT_BENCH=1 [INGOT_BENCH_RATE=500] [INGOT_BENCH_SECONDS=20]
// [INGOT_BENCH_DATABASE=postgres://…] [INGOT_BENCH_CPUPROFILE=FILE]. An open-loop load of mixed requests —
// 50% show, 40% list (a page of 50, detailed, as a dashboard asks), 10%
// create — at a fixed rate on a fleet seeded with 500 servers; every
// latency counts from the request's scheduled start, so a stall shows in
// the tail instead of slowing the load (no coordinated omission). The
// reconciler builds the created servers meanwhile, against the simulator.
func TestBenchAPI(t *testing.T) {
	wanted(t)
	rate := envInt(t, "INGOT_BENCH_RATE", 500)
	secs := envInt(t, "INGOT_BENCH_SECONDS", 20)
	sim := ironicsim.New(ironicsim.Options{DeployTime: 10 * time.Second, UndeployTime: time.Second, Seed: 1})
	total := rate * secs / 10
	sim.AddNodes(500+total+100, ironicsim.NodeSpec{ResourceClass: "baremetal"})
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	g := startIngot(t, srv.URL, "baremetal", nil)
	ids := g.create(t, 500)
	cpuProfile(t)

	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512}, Timeout: time.Minute}
	type sample struct {
		kind string
		d    time.Duration
		ok   bool
	}
	n := rate * secs
	samples := make([]sample, n)
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := make([]string, n)
	for i := range kinds {
		switch r := rng.IntN(10); {
		case r < 5:
			kinds[i] = "show"
		case r < 9:
			kinds[i] = "list"
		default:
			kinds[i] = "create"
		}
	}
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		at := start.Add(time.Duration(i) * time.Second / time.Duration(rate))
		time.Sleep(time.Until(at))
		wg.Add(1)
		go func() {
			defer wg.Done()
			var req *http.Request
			switch kinds[i] {
			case "show":
				req, _ = http.NewRequest(http.MethodGet, g.api+"/v2.1/servers/"+ids[i%len(ids)], nil)
			case "list":
				req, _ = http.NewRequest(http.MethodGet, g.api+"/v2.1/servers/detail?limit=50", nil)
			default:
				req, _ = http.NewRequest(http.MethodPost, g.api+"/v2.1/servers", bytes.NewReader(g.createBody(fmt.Sprintf("l%d", i))))
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := hc.Do(req)
			ok := err == nil && resp.StatusCode < 300
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			samples[i] = sample{kinds[i], time.Since(at), ok}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	by := map[string][]time.Duration{}
	failed := 0
	for _, s := range samples {
		by[s.kind] = append(by[s.kind], s.d)
		by["all"] = append(by["all"], s.d)
		if !s.ok {
			failed++
		}
	}
	db := "SQLite"
	if os.Getenv("INGOT_BENCH_DATABASE") != "" {
		db = "INGOT_BENCH_DATABASE"
	}
	for _, k := range []string{"all", "show", "list", "create"} {
		d := by[k]
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		t.Logf("API on %s, %d req/s for %s (%d requests, %d failed): %-6s n=%d p50 %s p99 %s max %s", db, rate, el.Round(time.Second),
			n, failed, k, len(d), quantile(d, 0.5).Round(10*time.Microsecond), quantile(d, 0.99).Round(10*time.Microsecond),
			d[len(d)-1].Round(time.Millisecond))
	}
	t.Logf("reconciler meanwhile: %s", g.ticks)
	if failed > 0 {
		t.Errorf("%d requests failed", failed)
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
