package core

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
)

// TestAuditBounded: a flood of one kind writes its burst, counts the rest,
// and says how many it suppressed once its bucket refills; another kind
// is not starved by it.
func TestAuditBounded(t *testing.T) {
	var buf strings.Builder
	c := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a := NewAudit(slog.New(slog.NewJSONHandler(&buf, nil)), c)
	ctx := context.Background()
	for range 1000 {
		a.write(ctx, AuditAuthFailure, slog.String("reason", "no token"))
	}
	a.write(ctx, AuditChange, slog.String("route", "/v2.1/servers"))
	c.Advance(time.Second)
	a.write(ctx, AuditAuthFailure, slog.String("reason", "no token"))
	counts := map[string]int{}
	suppressed := 0
	for line := range strings.Lines(buf.String()) {
		var l struct {
			Msg, Kind  string
			Audit      bool
			Suppressed int
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil || !l.Audit {
			t.Fatalf("not an audit line: %s (%v)", line, err)
		}
		counts[l.Msg+" "+l.Kind]++
		suppressed += l.Suppressed
	}
	burst := int(auditRate[AuditAuthFailure].burst)
	if counts["audit auth_failure"] != burst+1 || counts["audit change"] != 1 || counts["audit suppressed auth_failure"] != 1 {
		t.Errorf("lines: %v, want %d auth failures, 1 change, 1 suppressed", counts, burst+1)
	}
	if suppressed != 1000-burst {
		t.Errorf("suppressed %d, want %d", suppressed, 1000-burst)
	}
}
