// Package notifications tests ingot's Nova-style versioned notifications
// end to end: `ingot serve --dev` (the built-in simulated Ironic) publishing
// to the machine's RabbitMQ (a fresh vhost per test), received by a real
// oslo.messaging notification listener (listener.py, Debian's
// python3-oslo.messaging), with the bus taken away and the process killed.
package notifications

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/servicetest"
)

func TestMain(m *testing.M) { os.Exit(ingottest.Main(m)) }

const (
	python      = "/usr/bin/python3"
	osloMarker  = "/usr/bin/oslo-messaging-send-notification" // python3-oslo.messaging
	rabbitmqctl = "/usr/sbin/rabbitmqctl"
	exchange    = "nova"
	topic       = "versioned_notifications"
	waitLong    = 90 * time.Second
)

// Note is one notification as the oslo.messaging listener received it.
type Note struct {
	Priority    string `json:"priority"`
	PublisherID string `json:"publisher_id"`
	EventType   string `json:"event_type"`
	MessageID   string `json:"message_id"`
	Payload     struct {
		Name      string         `json:"nova_object.name"`
		Namespace string         `json:"nova_object.namespace"`
		Version   string         `json:"nova_object.version"`
		Data      map[string]any `json:"nova_object.data"`
	} `json:"payload"`
}

// uuid is the payload's instance.
func (n Note) uuid() string { s, _ := n.Payload.Data["uuid"].(string); return s }

// listener is a running listener.py and what it received.
type listener struct {
	mu    sync.Mutex
	notes []Note
}

// listen starts the oslo.messaging listener on bus and waits until it
// listens; it is killed when the test ends.
func listen(t *testing.T, bus *ironictest.Bus) *listener {
	t.Helper()
	servicetest.Require(t, ".ci/install-oslo-messaging.sh", python, osloMarker)
	cmd := exec.Command(python, "listener.py", bus.IronicURL, exchange, topic)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errLog := filepath.Join(t.TempDir(), "listener.err")
	ef, err := os.Create(errLog)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = ef
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		ef.Close()
		if t.Failed() {
			b, _ := os.ReadFile(errLog)
			t.Logf("listener stderr:\n%s", tail(string(b), 30))
		}
	})
	l := &listener{}
	ready := make(chan struct{})
	go l.read(t, out, ready)
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the oslo.messaging listener did not start listening in 30 s")
	}
	return l
}

func (l *listener) read(t *testing.T, r io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "READY" {
			close(ready)
			continue
		}
		var n Note
		if err := json.Unmarshal([]byte(line), &n); err != nil {
			t.Errorf("listener printed %q: %v", line, err)
			continue
		}
		l.mu.Lock()
		l.notes = append(l.notes, n)
		l.mu.Unlock()
	}
}

// of returns the notifications received about server id, in order.
func (l *listener) of(id string) []Note {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Note
	for _, n := range l.notes {
		if n.uuid() == id {
			out = append(out, n)
		}
	}
	return out
}

// waitFor waits until the listener received event type et about id.
func (l *listener) waitFor(t *testing.T, id, et string) []Note {
	t.Helper()
	var got []Note
	poll.Until(t, waitLong, et+" of "+id, func() (bool, string) {
		got = l.of(id)
		return len(byType(got, et)) > 0, fmt.Sprintf("received %v", types(got))
	})
	return got
}

func byType(notes []Note, et string) []Note {
	var out []Note
	for _, n := range notes {
		if n.EventType == et {
			out = append(out, n)
		}
	}
	return out
}

func types(notes []Note) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.EventType
	}
	return out
}

// dev is `ingot serve --dev` publishing to a bus.
type dev struct {
	t       *testing.T
	dir     string
	overlay string
	imageID string
	netID   string
	runs    int
}

func newDev(t *testing.T, bus *ironictest.Bus) *dev {
	t.Helper()
	d := &dev{t: t, dir: t.TempDir()}
	d.overlay = filepath.Join(d.dir, "quick.yaml")
	cfg := "poll_interval: 100ms\ndrift_interval: 300ms\nhost: notify-test\n" +
		"ironic: {sim: {deploy_time: 500ms, undeploy_time: 200ms}}\n"
	if err := os.WriteFile(d.overlay, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// The URL carries the broker's password: from the environment, as an
	// operator keeps it out of the file.
	t.Setenv(config.EnvPublishURL, bus.URL)
	c := config.Dev(d.dir)
	if err := c.Normalize(); err != nil {
		t.Fatal(err)
	}
	d.imageID, d.netID = c.Images[0].ID, c.Networks[0].ID
	return d
}

// launch starts ingot on the data directory (again after a kill) and
// waits until it serves.
func (d *dev) launch(env ...string) *ingottest.Proc {
	d.t.Helper()
	d.runs++
	return ingottest.Start(d.t, ingottest.Binary(d.t, "crashpoints"),
		ingottest.Options{Env: env, Log: filepath.Join(d.dir, fmt.Sprintf("ingot-%d.log", d.runs))},
		"serve", "--dev", "--data-dir", filepath.Join(d.dir, "data"), "--config", d.overlay, "--listen", "127.0.0.1:0")
}

func (d *dev) create(c *apitest.Client, name string) string {
	d.t.Helper()
	return c.Create(map[string]any{"name": name, "flavorRef": "bm.small", "imageRef": d.imageID,
		"networks": []map[string]string{{"uuid": d.netID}}})
}

// metric reads one sample of the process's /metrics (0 when absent).
func metric(t *testing.T, p *ingottest.Proc, name string) float64 {
	t.Helper()
	resp, err := http.Get(p.API + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == name {
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	return 0
}

// deny takes the bus away from ingot as an outage would: the broker
// refuses guest on the vhost and drops its connections. allow gives it back.
func deny(t *testing.T, bus *ironictest.Bus) {
	t.Helper()
	ctl(t, "clear_permissions", "-p", bus.Vhost, "guest")
	ctl(t, "close_all_connections", "--vhost", bus.Vhost, "notifications test: bus down")
}

func allow(t *testing.T, bus *ironictest.Bus) {
	t.Helper()
	ctl(t, "set_permissions", "-p", bus.Vhost, "guest", ".*", ".*", ".*")
}

func ctl(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(rabbitmqctl, append([]string{"-q"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("rabbitmqctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
