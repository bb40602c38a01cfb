package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/history"
	"github.com/ingot-dev/ingot/internal/poll"
)

// TestSoak churns for INGOT_SOAK (e.g. 1h) with faults and kills, then
// checks the processes stayed flat and the history holds. Not in CI:
// `make soak-churn DURATION=1h MODE=sqlite|replicas`.
func TestSoak(t *testing.T) {
	s, ok := load(t)
	if !ok {
		t.Skip("INGOT_SOAK unset (e.g. INGOT_SOAK=1h; make soak-churn)")
	}
	t.Logf("soak: %s", s)
	w := newWorld(t, s)
	rec := history.New()
	ch := newChurn(w, rec.Client(30*time.Second), s.seed, s.nodes*3/4)
	fl := newFaults(w, s.seed, s.killEvery)

	ctx, cancel := context.WithTimeout(t.Context(), s.duration)
	defer cancel()
	began := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() { ch.run(ctx, s.rate) })
	wg.Go(func() { fl.run(ctx) })
	samples := w.sampleUntil(ctx, t, rec, s.sample, began, ch)
	wg.Wait()
	t.Logf("churn of %s done: %s", time.Since(began).Round(time.Second), ch.summary())

	quiet := w.quiesce(t, rec)
	samples = append(samples, w.look(time.Since(began), ch.sent.Load())...)
	w.report(t, samples, s)
	table, byKind := fl.table()
	t.Logf("faults injected (%d: %v), since the churn began:\n%s", len(fl.log), byKind, table)
	t.Logf("quiet %s after the churn ended", quiet.Round(100*time.Millisecond))

	servers, err := history.Servers(rec.Client(30*time.Second), w.api(ch.rng), "")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := history.SimNodes(hc, w.sim)
	if err != nil {
		t.Fatal(err)
	}
	ports, err := w.ports(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	slack := 2*w.cfg.PollInterval + w.cfg.Ironic.Timeout + 30*time.Second // a kill's downtime and restart
	rec.Require(t, history.Final{At: time.Now(), Servers: servers, Nodes: nodes, Holdings: ports},
		history.Bounds{Build: w.cfg.BuildTimeout + slack, Delete: w.cfg.DeleteTimeout + slack})
}

// sampleUntil samples every slot each period until ctx ends, records a look
// at Ironic's nodes for the history, and restarts (failing the test) an
// ingot that exited without being killed.
func (w *world) sampleUntil(ctx context.Context, t *testing.T, rec *history.Recorder, period time.Duration, began time.Time, ch *churn) []sample {
	tick := time.NewTicker(period)
	defer tick.Stop()
	var out []sample
	for {
		select {
		case <-ctx.Done():
			return out
		case <-tick.C:
		}
		for _, sl := range w.slots {
			if p := sl.proc(); p != nil && !p.Alive() {
				t.Errorf("%s exited without being killed (%s): %s", sl.name, time.Since(began).Round(time.Second), p.Tail(10))
				w.start(sl)
			}
		}
		out = append(out, w.look(time.Since(began), ch.sent.Load())...)
		if nodes, err := history.SimNodes(hc, w.sim); err == nil {
			rec.ObserveNodes(nodes)
		}
	}
}

// quiesce waits until no server builds, reboots or is being deleted, and
// returns how long that took.
func (w *world) quiesce(t *testing.T, rec *history.Recorder) time.Duration {
	began := time.Now()
	c := rec.Client(30 * time.Second)
	err := poll.Wait(t.Context(), 10*time.Minute, func() (bool, string, error) {
		var busy []string
		for _, sl := range w.slots {
			p := sl.proc()
			if p == nil {
				return false, sl.name + " down", nil
			}
			servers, err := history.Servers(c, p.API, "")
			if err != nil {
				return false, err.Error(), nil
			}
			for id, s := range servers {
				if (s.Status != "ACTIVE" && s.Status != "ERROR") || s.TaskState != "" {
					busy = append(busy, fmt.Sprintf("%s %s/%s", id, s.Status, s.TaskState))
				}
			}
		}
		return len(busy) == 0, strings.Join(busy, ", "), nil
	})
	if err != nil {
		t.Fatalf("soak: not quiet: %v", err)
	}
	return time.Since(began)
}

// report writes the samples as CSV into the test's artifact directory,
// logs first, max and last of each figure of each slot, and fails a figure
// that grew (flat's rule) after a warm-up of a tenth of the run (at
// least a minute).
func (w *world) report(t *testing.T, samples []sample, s settings) {
	path := filepath.Join(t.ArtifactDir(), "soak-"+s.mode+".csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeCSV(f, samples); err != nil {
		t.Error(err)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	warmup := max(time.Minute, s.duration/10)
	var b strings.Builder
	for _, sl := range w.slots {
		for _, m := range metrics {
			first, most, last, ok := figures(samples, sl.name, m)
			if !ok {
				continue
			}
			verdict, flatOK := flat(samples, sl.name, m, warmup)
			fmt.Fprintf(&b, "  %s %-10s first %7d  max %7d  last %7d   %s\n", sl.name, m.name, first, most, last, verdict)
			if !flatOK {
				t.Errorf("not flat: %s (allowed: +50%% or +%d)", verdict, m.floor)
			}
		}
	}
	t.Logf("%d samples (%s; %s):\n%s", len(samples), path, "processes started per slot: "+w.starts(), b.String())
}

func (w *world) starts() string {
	var parts []string
	for _, sl := range w.slots {
		sl.mu.Lock()
		parts = append(parts, fmt.Sprintf("%s %d", sl.name, sl.started))
		sl.mu.Unlock()
	}
	return strings.Join(parts, ", ")
}
