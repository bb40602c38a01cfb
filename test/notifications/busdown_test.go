package notifications

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/apptest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/faulttest"
	"github.com/ingot-dev/ingot/internal/history"
	"github.com/ingot-dev/ingot/internal/ironicnotify"
	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/testlog"
)

// publishIronic publishes one node notification as Ironic would, straight
// to the broker (not through ingot's link).
func publishIronic(t *testing.T, bus *ironictest.Bus, node string) {
	t.Helper()
	inner, _ := json.Marshal(map[string]any{"message_id": fmt.Sprintf("m-%d", time.Now().UnixNano()), "publisher_id": "ironic-conductor.test",
		"event_type": "baremetal.node.power_set.end", "priority": "INFO", "timestamp": time.Now().UTC().Format("2006-01-02 15:04:05.000000"),
		"payload": map[string]any{"ironic_object.name": "NodePayload", "ironic_object.namespace": "ironic", "ironic_object.version": "1.17",
			"ironic_object.data": map[string]any{"uuid": node, "power_state": "power on"}}})
	body, _ := json.Marshal(map[string]any{"oslo.version": "2.0", "oslo.message": string(inner)})
	conn, err := amqp.Dial(bus.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.PublishWithContext(t.Context(), ironicnotify.DefaultExchange, ironicnotify.DefaultTopic+".info", false, false,
		amqp.Publishing{ContentType: "application/json", Body: body}); err != nil {
		t.Fatal(err)
	}
}

// metricLine reads one sample of /metrics ("" when absent).
func metricLine(t *testing.T, api, name string) string {
	t.Helper()
	resp, err := http.Get(api + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}

// TestBusDownAndBack: ingot consumes Ironic's notifications (ironic.
// notifications on) through a fault proxy on its AMQP link to the
// machine's RabbitMQ (the broker itself is shared and stays up), and the
// link is cut (every connection reset, as a stopped broker does). The cut
// is seen — ingot_notifications_connected 0 and a warning that it relies
// on polling — and builds and a delete made meanwhile complete by the
// poll; once the link heals the consumer connects again (metric 1, a
// reconnect counted) and a notification Ironic publishes then is received;
// the history check finds nothing lost, resurrected, double-held or
// leaked.
func TestBusDownAndBack(t *testing.T) {
	bus := ironictest.NewBus(t)
	link := faulttest.New(t, "amqp", "127.0.0.1:5672")
	sim := ironicsim.New(ironicsim.Options{DeployTime: time.Second, UndeployTime: 200 * time.Millisecond})
	nodes := sim.AddNodes(10, ironicsim.NodeSpec{ResourceClass: "baremetal", Ports: 1})
	ironic := httptest.NewServer(sim.Handler())
	t.Cleanup(ironic.Close)
	cfg, err := config.Parse(fmt.Appendf(nil, `database: %s/ingot.db
poll_interval: 1s
ironic: {url: %s, timeout: 5s, notifications: {url: %q}}
flavors: [{name: bm, resource_class: baremetal, vcpus: 8, ram_mb: 16384, disk_gb: 100}]
images: [{name: debian-12, url: "http://images.example/debian-12.qcow2"}]
networks: [{name: provisioning, cidr: 10.0.0.0/24}]
`, t.TempDir(), ironic.URL, link.Rewrite(bus.URL)))
	if err != nil {
		t.Fatal(err)
	}
	var logs testlog.Buffer
	a, url := apptest.Serve(t, cfg, app.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	rec := history.New()
	c := apitest.New(t, url)
	c.HTTP = rec.Client(30 * time.Second)
	connected := func(want string) func() bool {
		return func() bool { return metricLine(t, url, "ingot_notifications_connected") == want }
	}
	create := func(name string) string {
		return c.Create(map[string]any{"name": name, "flavorRef": "bm", "imageRef": cfg.Images[0].ID,
			"networks": []map[string]string{{"uuid": cfg.Networks[0].ID}}})
	}
	c.WaitFor("the consumer connected", 30*time.Second, connected("1"))
	before := create("before")
	c.WaitStatus(before, "ACTIVE", time.Minute)

	link.Reset()
	cut := time.Now()
	c.WaitFor("the cut seen", 30*time.Second, connected("0"))
	seen := time.Since(cut)
	var during []string
	for i := range 4 {
		during = append(during, create(fmt.Sprintf("during-%d", i)))
	}
	c.Delete(before)
	for _, id := range during {
		c.WaitStatus(id, "ACTIVE", time.Minute)
	}
	c.WaitGone(before, time.Minute)
	built := time.Since(cut) - seen
	if !strings.Contains(logs.String(), "relying on polling") {
		t.Errorf("no warning that ingot relies on polling:\n%s", logs.String())
	}

	link.Heal()
	healed := time.Now()
	c.WaitFor("the consumer connected again", time.Minute, connected("1"))
	back := time.Since(healed)
	events := a.Notifications.Status().Events
	publishIronic(t, bus, nodes[0])
	c.WaitFor("a notification after the heal", 30*time.Second, func() bool { return a.Notifications.Status().Events > events })
	if st := a.Notifications.Status(); st.Reconnects < 1 {
		t.Errorf("consumer status %+v, want a reconnect counted", st)
	}
	after := create("after")
	c.WaitStatus(after, "ACTIVE", time.Minute)
	servers, err := history.Servers(c.HTTP, url, "")
	if err != nil {
		t.Fatal(err)
	}
	simNodes, err := history.SimNodes(http.DefaultClient, ironic.URL)
	if err != nil {
		t.Fatal(err)
	}
	v := rec.Require(t, history.Final{At: time.Now(), Servers: servers, Nodes: simNodes},
		history.Bounds{Build: cfg.BuildTimeout + 2*cfg.PollInterval, Delete: cfg.DeleteTimeout + 2*cfg.PollInterval})
	t.Logf("AMQP link reset: seen in %s (metric 0, warning); %d builds and a delete done by the poll in %s; healed → connected again in %s, a notification received; %s",
		seen.Round(10*time.Millisecond), len(during), built.Round(10*time.Millisecond), back.Round(10*time.Millisecond), v)
}
