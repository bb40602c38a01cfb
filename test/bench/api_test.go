package bench

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironicsim"
)

// TestBenchAPI: INGOT_BENCH=1 [INGOT_BENCH_RATE=500] [INGOT_BENCH_SECONDS=20]
// [INGOT_BENCH_MIX=70/20/10] [INGOT_BENCH_SERVERS=1000]
// [INGOT_BENCH_DATABASE=postgres://…] [INGOT_BENCH_CPUPROFILE=FILE]. An
// open-loop load of mixed requests — by default 70% show, 20% list (a page
// of 50, detailed, as a dashboard asks), 10% create — at a fixed rate on a
// fleet seeded with 1,000 servers; every latency counts from the request's
// scheduled start, so a stall shows in the tail instead of slowing the load
// (no coordinated omission). The requests come from another process
// (runLoad). The reconciler builds the servers meanwhile, against the
// simulator.
func TestBenchAPI(t *testing.T) {
	wanted(t)
	rate := envInt(t, "INGOT_BENCH_RATE", 500)
	secs := envInt(t, "INGOT_BENCH_SECONDS", 20)
	seeded := envInt(t, "INGOT_BENCH_SERVERS", 1000)
	show, list := mix(t)
	n := rate * secs
	sim := ironicsim.New(ironicsim.Options{DeployTime: 10 * time.Second, UndeployTime: time.Second, Seed: 1})
	sim.AddNodes(seeded+n*(100-show-list)/100+100, ironicsim.NodeSpec{ResourceClass: "baremetal"})
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	g := startIngot(t, srv.URL, "baremetal", nil)
	ids := g.create(t, seeded)

	rng := rand.New(rand.NewPCG(1, 2))
	plan := loadPlan{Rate: rate, Shots: make([]shot, n)}
	for i := range plan.Shots {
		switch r := rng.IntN(100); {
		case r < show:
			plan.Shots[i] = shot{Kind: "show", Method: http.MethodGet, URL: g.api + "/v2.1/servers/" + ids[i%len(ids)]}
		case r < show+list:
			plan.Shots[i] = shot{Kind: "list", Method: http.MethodGet, URL: g.api + "/v2.1/servers/detail?limit=50"}
		default:
			plan.Shots[i] = shot{Kind: "create", Method: http.MethodPost, URL: g.api + "/v2.1/servers", Body: g.createBody(fmt.Sprintf("l%d", i))}
		}
	}
	cpuProfile(t)
	cpu0 := cpuTime()
	samples, el, genCPU := runLoad(t, plan)
	cpu := cpuTime() - cpu0
	by := map[string][]time.Duration{}
	failed := 0
	for _, s := range samples {
		by[s.Kind] = append(by[s.Kind], s.D)
		by["all"] = append(by["all"], s.D)
		if !s.OK {
			failed++
		}
	}
	db := "SQLite"
	if os.Getenv("INGOT_BENCH_DATABASE") != "" {
		db = "INGOT_BENCH_DATABASE"
	}
	for _, k := range []string{"all", "show", "list", "create"} {
		d := by[k]
		if len(d) == 0 {
			continue
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		t.Logf("API on %s, %d servers, %d req/s for %s (%d requests, %d failed): %-6s n=%d p50 %s p99 %s max %s", db, seeded,
			rate, el.Round(time.Second), n, failed, k, len(d), quantile(d, 0.5).Round(10*time.Microsecond),
			quantile(d, 0.99).Round(10*time.Microsecond), d[len(d)-1].Round(time.Millisecond))
	}
	if os.Getenv("INGOT_BENCH_TIMELINE") != "" {
		timeline(t, samples, rate)
	}
	t.Logf("ingot CPU %s (%.0f%% of one core), the load generator's %s; reconciler meanwhile: %s; load average %s",
		cpu.Round(time.Millisecond), 100*cpu.Seconds()/el.Seconds(), genCPU.Round(time.Millisecond), g.ticks, loadAvg())
	if failed > 0 {
		t.Errorf("%d requests failed", failed)
	}
}

// timeline logs each second's p99 and max (INGOT_BENCH_TIMELINE=1), to
// see whether the tail is spread or comes in stalls.
func timeline(t *testing.T, samples []sample, rate int) {
	for at := 0; at < len(samples); at += rate {
		var d []time.Duration
		for _, s := range samples[at:min(at+rate, len(samples))] {
			d = append(d, s.D)
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		t.Logf("second %d: p50 %s p99 %s max %s", at/rate, quantile(d, 0.5).Round(10*time.Microsecond),
			quantile(d, 0.99).Round(10*time.Microsecond), d[len(d)-1].Round(time.Millisecond))
	}
}

// mix is INGOT_BENCH_MIX, "show/list/create" in percent (70/20/10 by
// default); it returns the show and list shares.
func mix(t *testing.T) (show, list int) {
	v := os.Getenv("INGOT_BENCH_MIX")
	if v == "" {
		return 70, 20
	}
	var p [3]int
	parts := strings.Split(v, "/")
	for i := range p {
		var err error
		if len(parts) != 3 {
			break
		}
		if p[i], err = strconv.Atoi(parts[i]); err != nil || p[i] < 0 {
			break
		}
	}
	if len(parts) != 3 || p[0]+p[1]+p[2] != 100 {
		t.Fatalf("INGOT_BENCH_MIX=%q: want show/list/create percentages adding to 100", v)
	}
	return p[0], p[1]
}

// loadAvg is the machine's 1-minute load average as /proc shows it.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
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
