package bench

import (
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ingottest"
)

// TestBenchScale: INGOT_SCALE=servers:nodes (e.g. 10000:100000). The
// simulator runs in another process (`ingot sim`), so this process's CPU
// and RSS are ingot's own (its API, reconciler and store, plus the small
// load client that posts the creates). The worst tick is a figure.
// INGOT_BENCH_CPUPROFILE=FILE writes a CPU profile of the burst (go tool
// pprof FILE shows where ingot's time goes).
func TestBenchScale(t *testing.T) {
	spec := os.Getenv("INGOT_SCALE")
	if spec == "" {
		t.Skip("set INGOT_SCALE=servers:nodes to run the scale measurement")
	}
	servers, nodes := 1000, 10000
	if a, b, ok := strings.Cut(spec, ":"); ok {
		servers, _ = strconv.Atoi(a)
		nodes, _ = strconv.Atoi(b)
	}
	sim := ingottest.Start(t, ingottest.Binary(t), ingottest.Options{}, "sim", "--nodes", strconv.Itoa(nodes),
		"--listen", "127.0.0.1:0", "--deploy-time", "5s", "--undeploy-time", "1s", "--seed", "1")
	ironicURL := sim.WaitLog(regexp.MustCompile(`listening on (http://\S+)`), 2*time.Minute)

	g := startIngot(t, ironicURL, "baremetal", func(c *config.Config) { c.BuildTimeout = time.Hour })
	runtime.GC()
	cpuProfile(t)
	rss0 := maxRSS()
	cpu0, wall0 := cpuTime(), time.Now()
	g.create(t, servers)
	created := time.Since(wall0)
	g.waitActive(t, servers, 30*time.Minute)
	wall, cpu := time.Since(wall0), cpuTime()-cpu0
	t.Logf("%d servers on %d nodes (simulator in another process): all ACTIVE in %s (creates took %s); ingot CPU %s = %.2f ms per build; max RSS %d MiB (%d MiB before the burst); %s",
		servers, nodes, wall.Round(time.Millisecond), created.Round(time.Millisecond), cpu.Round(time.Millisecond),
		float64(cpu.Microseconds())/1000/float64(servers), maxRSS()>>20, rss0>>20, g.ticks)
}

// cpuProfile writes a CPU profile of the rest of the test to
// INGOT_BENCH_CPUPROFILE, when set (go tool pprof reads it).
func cpuProfile(t *testing.T) {
	path := os.Getenv("INGOT_BENCH_CPUPROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pprof.StopCPUProfile(); f.Close() })
}
