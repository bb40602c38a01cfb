// Package scale measures docs/DESIGN.md §5's scale targets: many servers building
// at once against a large simulated inventory. It runs only when asked:
//
//	INGOT_SCALE=1000:10000 go test -run TestScale -v ./test/scale   # servers:nodes
package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/poll"
)

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

func TestScale(t *testing.T) {
	spec := os.Getenv("INGOT_SCALE")
	if spec == "" {
		t.Skip("set INGOT_SCALE=servers:nodes to run the scale measurement")
	}
	servers, nodes := 1000, 10000
	if a, b, ok := strings.Cut(spec, ":"); ok {
		servers, _ = strconv.Atoi(a)
		nodes, _ = strconv.Atoi(b)
	}
	sim := ironicsim.New(ironicsim.Options{DeployTime: 5 * time.Second, UndeployTime: time.Second, Seed: 1})
	sim.AddNodes(nodes, ironicsim.NodeSpec{ResourceClass: "baremetal"})
	ironS := httptest.NewServer(sim.Handler())
	defer ironS.Close()

	cfg := config.Default()
	cfg.Database = filepath.Join(t.TempDir(), "ingot.db")
	cfg.Ironic.URL = ironS.URL
	cfg.PollInterval = 2 * time.Second
	cfg.BuildTimeout = 10 * time.Minute
	cfg.Flavors = []config.Flavor{{Name: "bm", ResourceClass: "baremetal", DiskGB: 10}}
	cfg.Images = []config.Image{{Name: "img", URL: "http://images.example/x.qcow2"}}
	cfg.Networks = []config.Network{{Name: "prov", CIDR: "10.0.0.0/16"}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	api := httptest.NewServer(a.Handler)
	defer api.Close()

	var ticks []time.Duration
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			start := time.Now()
			_, _ = a.Reconciler.Tick(ctx)
			mu.Lock()
			ticks = append(ticks, time.Since(start))
			mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(cfg.PollInterval):
			}
		}
	}()

	runtime.GC()
	cpu0, wall0 := cpuTime(), time.Now()
	sim.ResetCounts()
	body := func(i int) []byte {
		b, _ := json.Marshal(map[string]any{"server": map[string]any{"name": fmt.Sprintf("s%d", i), "flavorRef": "bm",
			"imageRef": cfg.Images[0].ID, "networks": []map[string]string{{"uuid": cfg.Networks[0].ID}}}})
		return b
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range servers {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			resp, err := http.Post(api.URL+"/v2.1/servers", "application/json", bytes.NewReader(body(i)))
			if err != nil || resp.StatusCode != http.StatusAccepted {
				t.Errorf("create %d: %v %v", i, err, resp)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	created := time.Since(wall0)
	poll.Until(t, 10*time.Minute, "all active", func() (bool, string) {
		counts, err := a.Store.CountByPhase(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return counts[lifecycle.PhaseActive] == servers, fmt.Sprint(counts)
	})
	wall, cpu := time.Since(wall0), cpuTime()-cpu0
	cancel()
	<-done
	mu.Lock()
	var worst time.Duration
	for _, d := range ticks {
		worst = max(worst, d)
	}
	mu.Unlock()
	total := 0
	for _, v := range sim.Counts() {
		total += v
	}
	t.Logf("%d servers on %d nodes: all ACTIVE in %s (creates took %s); process CPU %s = %.2f ms per build (includes the in-process simulator and API); max RSS %d MiB; worst tick %s of %d; Ironic calls %d (%.1f per build)",
		servers, nodes, wall.Round(time.Millisecond), created.Round(time.Millisecond), cpu.Round(time.Millisecond),
		float64(cpu.Microseconds())/1000/float64(servers), maxRSS()>>20, worst.Round(time.Millisecond), len(ticks), total, float64(total)/float64(servers))
}
