package app

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/config"
)

// logLines is a text log that tests read back (safe for concurrent writes).
type logLines struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// tail returns the last n lines.
func (l *logLines) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := strings.Split(strings.TrimRight(l.buf.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// count returns how many lines hold every one of the strings.
func (l *logLines) count(subs ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range strings.Split(l.buf.String(), "\n") {
		all := line != ""
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all {
			n++
		}
	}
	return n
}

// TestBurstLogsOneWaitLine: a burst of 200 creates on the 8 nodes of
// `serve --dev` logs one INFO line about builds waiting for a node, not one
// per waiting build per tick (about 3,900 lines before), and the waits are
// still there at DEBUG.
func TestBurstLogsOneWaitLine(t *testing.T) {
	cfg := config.Dev(t.TempDir())
	cfg.PollInterval = 100 * time.Millisecond
	cfg.Ironic.Sim.DeployTime = 200 * time.Millisecond
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	var lines logLines
	log := slog.New(slog.NewTextHandler(&lines, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := New(ctx, cfg, Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a.Handler)
	defer srv.Close()
	done := make(chan struct{})
	go func() { _ = a.Reconciler.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	c := apitest.New(t, srv.URL)
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = c.Create(map[string]any{"name": "burst", "flavorRef": "bm.small", "imageRef": cfg.Images[0].ID,
			"networks": []map[string]string{{"uuid": cfg.Networks[0].ID}}})
	}
	c.WaitFor("every build ACTIVE or ERROR", 2*time.Minute, func() bool {
		for _, id := range ids {
			if s, _ := c.Get(id); s.Status == "BUILD" {
				return false
			}
		}
		return true
	})
	waits := lines.count("level=DEBUG", "inventory refreshed moments ago")
	info := lines.count("level=INFO", "refreshed moments ago") + lines.count("level=INFO", "wait for a free node")
	if info != 1 {
		t.Fatalf("%d INFO lines about waiting builds (and %d waits at DEBUG), want 1:\n%s", info, waits, firstLines(&lines, "level=INFO", 20))
	}
	if waits == 0 {
		t.Fatal("no build waited for a node: the burst does not exercise the retry")
	}
	t.Logf("one INFO line, %d waits at DEBUG", waits)
}

func firstLines(l *logLines, sub string, n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, sub) && len(out) < n {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
