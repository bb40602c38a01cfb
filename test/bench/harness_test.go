// Package bench holds ingot's benchmarks (README "Benchmarks"). They are
// measurements, not pass/fail timings: each runs only when asked
// (INGOT_BENCH=1, INGOT_SCALE=servers:nodes) and prints its figures.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/pgtest"
	"github.com/ingot-dev/ingot/internal/poll"
)

func wanted(t *testing.T) {
	t.Helper()
	if os.Getenv("INGOT_BENCH") == "" {
		t.Skip("set INGOT_BENCH=1 to run the benchmarks")
	}
}

// counter is a counting reverse proxy in front of an Ironic: requests by
// method and route (UUIDs and names folded to {id}).
type counter struct {
	mu       sync.Mutex
	routes   map[string]int
	total    int
	polls    int // GETs of nodes (a list or one node): the cost of watching
	slowest  map[string]time.Duration
	started  time.Time
	inflight int      // requests not yet answered
	trace    []string // each request, with its time since reset (INGOT_BENCH_TRACE=1)
	tracing  bool     // keep trace
}

var idSeg = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-|^node-|^n\d+$`)

func route(method, path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if i >= 3 && (idSeg.MatchString(s) || (segs[i-1] == "nodes" && s != "detail")) {
			segs[i] = "{id}"
		}
	}
	return method + " " + strings.Join(segs, "/")
}

func newCounter(t *testing.T, target string) (*counter, string) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	c := &counter{routes: map[string]int{}, slowest: map[string]time.Duration{}, tracing: tracing}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt := route(r.Method, r.URL.Path)
		c.mu.Lock()
		c.routes[rt]++
		c.total++
		if c.tracing {
			c.trace = append(c.trace, fmt.Sprintf("+%dms %s %s", time.Since(c.started).Milliseconds(), r.Method, r.URL.RequestURI()))
		}
		if rt == "GET /v1/nodes" || rt == "GET /v1/nodes/{id}" {
			c.polls++
		}
		c.inflight++
		c.mu.Unlock()
		start := time.Now()
		rp.ServeHTTP(w, r)
		d := time.Since(start)
		c.mu.Lock()
		c.slowest[rt] = max(c.slowest[rt], d)
		c.inflight--
		c.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

// tracing: INGOT_BENCH_TRACE=1 prints every request a build benchmark
// counted, in order, with its time.
var tracing = os.Getenv("INGOT_BENCH_TRACE") != ""

// traced returns the requests counted since the last reset, in order.
func (c *counter) traced() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.trace...)
}

// warmed waits for the scheduler's warm-up listing of the inventory (its
// ports' list is the last thing the start asks of Ironic) to be answered:
// a build then counts its own calls only.
func (c *counter) warmed(t *testing.T) {
	poll.Until(t, 30*time.Second, "the inventory's warm-up listing", func() (bool, string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.routes["GET /v1/ports"] > 0 && c.inflight == 0, fmt.Sprintf("%d requests in flight, routes %v", c.inflight, c.routes)
	})
}

func (c *counter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.routes, c.total, c.polls, c.started, c.trace = map[string]int{}, 0, 0, time.Now(), nil
	c.slowest = map[string]time.Duration{}
}

func (c *counter) snapshot() (routes map[string]int, total, polls int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	routes = map[string]int{}
	for k, v := range c.routes {
		routes[k] = v
	}
	return routes, c.total, c.polls
}

// ticks records the reconciler's tick lengths.
type ticks struct {
	mu               sync.Mutex
	full, fast       int
	worstFull, worst time.Duration
	worstFast        time.Duration
	firstFull        chan struct{} // closed by the first full tick
}

func newTicks() *ticks { return &ticks{firstFull: make(chan struct{})} }

// waitFull waits for the first full tick.
func (k *ticks) waitFull(t *testing.T) {
	t.Helper()
	select {
	case <-k.firstFull:
	case <-time.After(time.Minute):
		t.Fatal("no full tick within a minute")
	}
}

// waitFulls waits until n full ticks have ended (the connection of the
// notifications' consumer asks for one, the resync after a gap).
func (k *ticks) waitFulls(t *testing.T, n int) {
	t.Helper()
	poll.Until(t, time.Minute, fmt.Sprintf("%d full ticks", n), func() (bool, string) {
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.full >= n, fmt.Sprintf("%d so far", k.full)
	})
}

func (k *ticks) record(full bool, d time.Duration, _ int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if full {
		if k.full == 0 {
			close(k.firstFull)
		}
		k.full++
		k.worstFull = max(k.worstFull, d)
	} else {
		k.fast++
		k.worstFast = max(k.worstFast, d)
	}
}

func (k *ticks) String() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return fmt.Sprintf("%d full ticks (worst %s), %d fast ticks (worst %s)", k.full, k.worstFull.Round(time.Millisecond),
		k.fast, k.worstFast.Round(time.Millisecond))
}

// ingot is one ingot in this process, its reconciler running as in serve.
type ingot struct {
	a     *app.App
	api   string
	cfg   config.Config
	ticks *ticks
}

// startIngot runs ingot against ironicURL with the default cadence, on a
// fresh SQLite file, or with INGOT_BENCH_DATABASE (a postgres:// DSN) on a
// fresh database of that PostgreSQL server.
func startIngot(t *testing.T, ironicURL, rc string, mod func(*config.Config)) *ingot {
	t.Helper()
	cfg := config.Default()
	cfg.Database = filepath.Join(t.TempDir(), "ingot.db")
	if dsn := os.Getenv("INGOT_BENCH_DATABASE"); dsn != "" {
		// A fresh database on that server for each run, dropped after it:
		// the servers an earlier run left would slow this one.
		t.Setenv(pgtest.EnvVar, dsn)
		cfg.Database = pgtest.DSN(t)
	}
	cfg.Ironic.URL = ironicURL
	cfg.BuildTimeout = 30 * time.Minute
	cfg.Flavors = []config.Flavor{{Name: "bm", ResourceClass: rc, DiskGB: 10}}
	cfg.Images = []config.Image{{Name: "img", URL: "http://images.example/x.qcow2"}}
	cfg.Networks = []config.Network{{Name: "prov", CIDR: "10.0.0.0/12"}}
	if mod != nil {
		mod(&cfg)
	}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := newTicks()
	opts := app.Options{Tick: k.record}
	if tracing {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	app.TuneGC(os.LookupEnv) // as ingot serve runs
	a, err := app.New(ctx, cfg, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	api := httptest.NewServer(a.Handler)
	done := make(chan struct{})
	go func() { _ = a.Reconciler.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		api.Close()
		a.Close()
	})
	return &ingot{a: a, api: api.URL, cfg: cfg, ticks: k}
}

func (g *ingot) createBody(name string) []byte {
	b, _ := json.Marshal(map[string]any{"server": map[string]any{"name": name, "flavorRef": "bm",
		"imageRef": g.cfg.Images[0].ID, "networks": []map[string]string{{"uuid": g.cfg.Networks[0].ID}}}})
	return b
}

// create accepts n builds, 8 requests at a time, and returns their ids.
func (g *ingot) create(t *testing.T, n int) []string {
	t.Helper()
	ids := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			resp, err := http.Post(g.api+"/v2.1/servers", "application/json", bytes.NewReader(g.createBody(fmt.Sprintf("b%d", i))))
			if err != nil {
				t.Errorf("create %d: %v", i, err)
				return
			}
			defer resp.Body.Close()
			var out struct{ Server struct{ ID string } }
			if resp.StatusCode != http.StatusAccepted || json.NewDecoder(resp.Body).Decode(&out) != nil {
				body, _ := io.ReadAll(resp.Body)
				t.Errorf("create %d: %s %s", i, resp.Status, body)
				return
			}
			ids[i] = out.Server.ID
		}()
	}
	wg.Wait()
	return ids
}

// waitActive waits until n servers are ACTIVE (none in ERROR).
func (g *ingot) waitActive(t *testing.T, n int, limit time.Duration) {
	t.Helper()
	poll.Until(t, limit, fmt.Sprintf("%d servers ACTIVE", n), func() (bool, string) {
		counts, err := g.a.Store.CountByPhase(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if counts[lifecycle.PhaseError] > 0 {
			t.Fatalf("not all active: %v", counts)
		}
		return counts[lifecycle.PhaseActive] >= n, fmt.Sprint(counts)
	})
}

// toActive returns, per server in ascending order, the time from Ironic's
// provision_updated_at of its node (when it reached active) to the
// server's LaunchedAt, and from its creation to its LaunchedAt.
func (g *ingot) toActive(t *testing.T, ironicURL string, ids []string) (fromActive, fromCreate []time.Duration) {
	t.Helper()
	for _, id := range ids {
		s, err := g.a.Store.GetServer(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, ironicURL+"/v1/nodes/"+s.NodeID+"?fields=provision_updated_at", nil)
		req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var n struct {
			At string `json:"provision_updated_at"`
		}
		err = json.NewDecoder(resp.Body).Decode(&n)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		at, err := parseIronicTime(n.At)
		if err != nil {
			t.Fatalf("node %s provision_updated_at %q: %v", s.NodeID, n.At, err)
		}
		fromActive = append(fromActive, s.LaunchedAt.Sub(at))
		fromCreate = append(fromCreate, s.LaunchedAt.Sub(s.CreatedAt))
	}
	sort.Slice(fromActive, func(i, j int) bool { return fromActive[i] < fromActive[j] })
	sort.Slice(fromCreate, func(i, j int) bool { return fromCreate[i] < fromCreate[j] })
	return fromActive, fromCreate
}

func parseIronicTime(s string) (time.Time, error) {
	for _, l := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02T15:04:05.999999-07:00"} {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("unparseable")
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(q*float64(len(d))))]
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func maxRSS() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss * 1024
}

// slowRoutes formats each route's slowest answer, slowest first.
func (c *counter) slowRoutes(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]int{}
	for k, v := range c.slowest {
		m[k] = int(v.Milliseconds())
	}
	return topRoutes(m, n)
}

// topRoutes formats the busiest routes.
func topRoutes(m map[string]int, n int) string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range m {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || (all[i].v == all[j].v && all[i].k < all[j].k) })
	var b strings.Builder
	for i, e := range all {
		if i == n {
			break
		}
		fmt.Fprintf(&b, "%s=%d ", e.k, e.v)
	}
	return b.String()
}
