package app

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironictest"
)

// notifyLogTail is how many of ingot's log lines a failed test shows.
const notifyLogTail = 80

// notified is an ingot reading the real Ironic's notifications from bus.
type notified struct {
	a   *App
	api *apitest.Client
	cfg config.Config
	log *logLines
}

// gauge reads a gauge from the app's registry (-1: not registered).
func (n *notified) gauge(name string) float64 {
	mfs, err := n.a.Metrics.Registry().Gather()
	if err != nil {
		return -1
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}

func startNotified(t *testing.T, ir *ironictest.Env, bus *ironictest.Bus, poll, fast time.Duration) *notified {
	t.Helper()
	cfg := config.Default()
	cfg.Database = filepath.Join(t.TempDir(), "ingot.db")
	cfg.Ironic.URL = ir.URL
	cfg.PollInterval, cfg.FastPollInterval = poll, fast
	cfg.Ironic.Notifications.URL = bus.URL
	cfg.Flavors = []config.Flavor{{Name: "bm", ResourceClass: "rc-notify", DiskGB: 10}}
	cfg.Images = []config.Image{{Name: "img", URL: "http://images.example/x.qcow2"}}
	cfg.Networks = []config.Network{{Name: "prov", CIDR: "10.0.0.0/24"}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs := &logLines{}
	// At debug level: a failed test shows each notification taken and
	// whether it woke the server.
	a, err := New(ctx, cfg, Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler)
	done := make(chan struct{}, 2)
	go func() { _ = a.Reconciler.Run(ctx); done <- struct{}{} }()
	go func() { a.RunNotifications(ctx); done <- struct{}{} }()
	t.Cleanup(func() {
		cancel()
		<-done
		<-done
		srv.Close()
		a.Close()
		if t.Failed() {
			t.Logf("ingot's last log lines:\n%s", logs.tail(notifyLogTail))
		}
	})
	n := &notified{a: a, api: apitest.New(t, srv.URL), cfg: cfg, log: logs}
	n.api.WaitFor("the notification consumer connected", 30*time.Second, func() bool { return a.Notifications.Status().Connected })
	return n
}

func (n *notified) create() string {
	return n.api.Create(map[string]any{"name": "n", "flavorRef": "bm", "imageRef": n.cfg.Images[0].ID,
		"networks": []map[string]string{{"uuid": n.cfg.Networks[0].ID}}})
}

// TestNotificationsDriveABuild: with the poll and fast poll intervals an
// hour long, a build on the real Ironic still reaches ACTIVE within
// seconds: after the create's kick, only Ironic's notifications wake it
// (deploy done, power on).
func TestNotificationsDriveABuild(t *testing.T) {
	bus := ironictest.NewBus(t)
	ir := ironictest.StartReal(t, ironictest.RealOptions{Notifications: bus.IronicURL})
	ir.EnrollNodes(t, 1, ironictest.NodeSpec{ResourceClass: "rc-notify", Kind: ironictest.Fast})
	n := startNotified(t, ir, bus, time.Hour, time.Hour)
	start := time.Now()
	id := n.create()
	n.api.WaitStatus(id, "ACTIVE", 60*time.Second)
	t.Logf("create → ACTIVE in %s with hour-long poll intervals", time.Since(start).Round(time.Millisecond))
}

// TestNotificationsLostMidBuildFallBackToPolling: the bus goes away (its
// vhost deleted) while the node deploys; the consumer cannot reconnect, so
// the reconciler goes back to its fast ticks and the build completes,
// although the poll interval is an hour and no notification comes; the
// loss is a warning and ingot_notifications_connected 0.
func TestNotificationsLostMidBuildFallBackToPolling(t *testing.T) {
	bus := ironictest.NewBus(t)
	ir := ironictest.StartReal(t, ironictest.RealOptions{Notifications: bus.IronicURL, DeployDelay: 3 * time.Second})
	node := ir.EnrollNodes(t, 1, ironictest.NodeSpec{ResourceClass: "rc-notify", Kind: ironictest.Fast})[0]
	n := startNotified(t, ir, bus, time.Hour, 500*time.Millisecond)
	id := n.create()
	n.api.WaitFor("the node deploying", 60*time.Second, func() bool {
		st, _ := ir.GetNode(t, node)["provision_state"].(string)
		return st == "deploying" || st == "wait call-back"
	})
	if g := n.gauge("ingot_notifications_connected"); g != 1 {
		t.Fatalf("ingot_notifications_connected %v while connected, want 1", g)
	}
	if out, err := exec.Command("/usr/sbin/rabbitmqctl", "-q", "delete_vhost", bus.Vhost).CombinedOutput(); err != nil {
		t.Fatalf("rabbitmqctl delete_vhost: %v\n%s", err, out)
	}
	n.api.WaitFor("the consumer disconnected", 30*time.Second, func() bool { return !n.a.Notifications.Status().Connected })
	n.api.WaitStatus(id, "ACTIVE", 60*time.Second)
	if g := n.gauge("ingot_notifications_connected"); g != 0 {
		t.Errorf("ingot_notifications_connected %v after the bus went away, want 0", g)
	}
	if n.log.count("level=WARN", "bus unavailable, relying on polling") == 0 {
		t.Error("no warning that the bus went away")
	}
	if st := n.a.Notifications.Status(); st.Connected {
		t.Fatalf("the consumer is connected to a deleted vhost: %+v", st)
	}
}
