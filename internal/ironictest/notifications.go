package ironictest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The machine's RabbitMQ (guest/guest on loopback, as Debian installs it),
// managed with rabbitmqctl, which root can run (each call about 0.5 s).
const (
	rabbitAddr  = "127.0.0.1:5672"
	rabbitUser  = "guest"
	rabbitPass  = "guest"
	rabbitmqctl = "/usr/sbin/rabbitmqctl"
)

// Bus is a fresh RabbitMQ virtual host for one test: exchanges and queues
// outlive Ironic, so a test that shares a vhost with another sees its
// leftovers (docs/ironic.md §13).
type Bus struct {
	Vhost string
	// URL is the amqp:// URL a consumer dials (ironic.notifications.url).
	URL string
	// IronicURL is the same vhost as Ironic's transport_url (rabbit://),
	// for Options.Notifications.
	IronicURL string
}

// NewBus creates a vhost with full permissions for guest and deletes it
// (with its queues and connections) when the test ends. It skips the test
// when RabbitMQ is not reachable or rabbitmqctl is missing, and fails it
// instead when INGOT_TEST_IRONIC=1 (CI).
func NewBus(t testing.TB) *Bus {
	t.Helper()
	if err := rabbitReachable(); err != nil {
		if RealWanted() {
			t.Fatalf("ironictest: %s=1 but RabbitMQ is not usable: %v", EnvVar, err)
		}
		t.Skipf("ironictest: RabbitMQ not usable (%v); set %s=1 to make this a failure", err, EnvVar)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	vhost := "ingot-t-" + hex.EncodeToString(b[:])
	if err := ctl("add_vhost", vhost); err != nil {
		t.Fatalf("ironictest: %v", err)
	}
	t.Cleanup(func() {
		if err := ctl("delete_vhost", vhost); err != nil {
			t.Logf("ironictest: %v", err)
		}
	})
	if err := ctl("set_permissions", "-p", vhost, rabbitUser, ".*", ".*", ".*"); err != nil {
		t.Fatalf("ironictest: %v", err)
	}
	auth := rabbitUser + ":" + rabbitPass + "@" + rabbitAddr + "/" + vhost
	return &Bus{Vhost: vhost, URL: "amqp://" + auth, IronicURL: "rabbit://" + auth}
}

// CloseConnections makes the broker close every connection to the vhost
// (Ironic's and every consumer's), as a broker restart or a network cut
// would; each client sees a connection-forced error and must reconnect.
func (b *Bus) CloseConnections(t testing.TB) {
	t.Helper()
	if err := ctl("close_all_connections", "--vhost", b.Vhost, "ironictest: connections closed"); err != nil {
		t.Fatalf("ironictest: %v", err)
	}
}

// Connections counts the connections to the vhost.
func (b *Bus) Connections(t testing.TB) int {
	t.Helper()
	out, err := exec.Command(rabbitmqctl, "-q", "list_connections", "-p", b.Vhost, "--no-table-headers", "name").CombinedOutput()
	if err != nil {
		t.Fatalf("ironictest: rabbitmqctl list_connections: %v\n%s", err, out)
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

func rabbitReachable() error {
	if _, err := os.Stat(rabbitmqctl); err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp", rabbitAddr, 2*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

func ctl(args ...string) error {
	out, err := exec.Command(rabbitmqctl, append([]string{"-q"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("rabbitmqctl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// NotificationFailures counts the notifications the real Ironic logged it
// could not send (oslo.messaging's "Could not send notification": the
// broker refused the publish, e.g. a 406 on the exchange, and the
// notification is dropped); 0 for the simulator.
func (e *Env) NotificationFailures(t testing.TB) int {
	t.Helper()
	if e.proc == nil {
		return 0
	}
	b, err := os.ReadFile(e.proc.log)
	if err != nil {
		t.Fatalf("ironictest: %v", err)
	}
	return strings.Count(string(b), "Could not send notification")
}
