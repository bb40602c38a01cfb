package metrics

import (
	"context"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// TestAlertRulesNameExportedMetrics: every ingot_* series the shipped
// alert rules (deploy/prometheus) query is one this package exports, so
// renaming a metric cannot silently turn an alert off.
func TestAlertRulesNameExportedMetrics(t *testing.T) {
	rules, err := os.ReadFile("../../deploy/prometheus/ingot.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	m := New(func(context.Context) (map[lifecycle.Phase]int, error) {
		return map[lifecycle.Phase]int{lifecycle.PhaseActive: 1}, nil
	})
	// Touch every collector so that each has a series to gather.
	m.IronicCall("get_node", ironic.ErrUnavailable, time.Millisecond)
	m.Tick(time.Second, 1)
	m.FastTick(time.Second, 1)
	m.PastDue(0)
	now := time.Now()
	m.Transition(&lifecycle.Server{}, &lifecycle.Server{Phase: lifecycle.PhaseActive, CreatedAt: now, UpdatedAt: now})
	m.Transition(&lifecycle.Server{}, &lifecycle.Server{Phase: lifecycle.PhaseDeleted, DeleteRequestedAt: now, UpdatedAt: now})
	m.Transition(&lifecycle.Server{}, &lifecycle.Server{Phase: lifecycle.PhaseError, Fault: &lifecycle.Fault{Reason: lifecycle.ReasonBuildTimeout}})
	m.LeasesHeld(1)
	m.LeaseTakeovers(1)
	m.EnableNotifications()
	m.NotificationsConnected(true)
	m.NotificationEvent(true)
	m.NotificationLag(time.Millisecond)
	m.Handler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/metrics", nil))

	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, f := range families {
		exported[f.GetName()] = true
		if strings.HasSuffix(f.GetName(), "_seconds") { // histograms
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				exported[f.GetName()+s] = true
			}
		}
	}
	used := regexp.MustCompile(`\bingot_[a-z_]+\b`).FindAllString(string(rules), -1)
	if len(used) == 0 {
		t.Fatal("the rules query no ingot_* metric")
	}
	for _, name := range used {
		if !exported[name] {
			t.Errorf("the alert rules query %s, which ingot does not export", name)
		}
	}
}
