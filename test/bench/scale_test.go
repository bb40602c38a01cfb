package bench

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
)

// TestBenchScale: INGOT_SCALE=servers:nodes (e.g. 10000:100000). The
// simulator runs in another process (`ingot sim`), so this process's CPU
// and RSS are ingot's own (its API, reconciler and store, plus the small
// load client that posts the creates). The worst tick is a figure.
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
	bin := filepath.Join(t.TempDir(), "ingot")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/ingot-dev/ingot/cmd/ingot").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	sim := exec.Command(bin, "sim", "--nodes", strconv.Itoa(nodes), "--listen", "127.0.0.1:0", "--deploy-time", "5s",
		"--undeploy-time", "1s", "--seed", "1")
	stdout, err := sim.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sim.Stderr = os.Stderr
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Process.Signal(syscall.SIGTERM); _ = sim.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("simulator: %v", err)
	}
	m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("simulator said %q", line)
	}
	ironicURL := m[1]

	g := startIngot(t, ironicURL, "baremetal", func(c *config.Config) { c.BuildTimeout = time.Hour })
	runtime.GC()
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
