package app

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
)

func diagnosed(t *testing.T, cfg config.Config) *logLines {
	t.Helper()
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	var lines logLines
	a, err := New(context.Background(), cfg, Options{Logger: slog.New(slog.NewTextHandler(&lines, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.diagnose(context.Background())
	return &lines
}

// TestStartupWarnings: what would make every create fail is said at
// start, at WARN, with what to do — not found out at the first create.
func TestStartupWarnings(t *testing.T) {
	t.Run("nothing configured, Ironic down", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0") // a port nothing answers on once closed
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		cfg := config.Default()
		cfg.Database = t.TempDir() + "/ingot.db"
		cfg.Ironic.URL = "http://" + addr
		cfg.Ironic.Timeout = time.Second
		lines := diagnosed(t, cfg)
		for _, want := range [][]string{
			{"level=WARN", "no flavors"},
			{"level=WARN", "no images configured"},
			{"level=WARN", "Ironic does not answer", addr},
		} {
			if lines.count(want...) != 1 {
				t.Errorf("no line with %q in:\n%s", want, lines.buf.String())
			}
		}
	})
	t.Run("a flavor no node can take", func(t *testing.T) {
		cfg := config.Dev(t.TempDir())
		cfg.Flavors = append(cfg.Flavors, config.Flavor{Name: "gold", ResourceClass: "gold", VCPUs: 1, RAMMB: 1, DiskGB: 1})
		lines := diagnosed(t, cfg)
		if lines.count("level=WARN", "resource class of this flavor", "flavor=gold") != 1 {
			t.Errorf("no warning about flavor gold in:\n%s", lines.buf.String())
		}
		if lines.count("level=WARN", "bm.small") != 0 || lines.count("level=WARN", "no flavors") != 0 {
			t.Errorf("a warning for the dev flavor:\n%s", lines.buf.String())
		}
		if lines.count("Ironic answers", "nodes=8") != 1 {
			t.Errorf("no Ironic line:\n%s", lines.buf.String())
		}
	})
}
