// Package servicetest runs Debian's OpenStack Python services for tests
// (neutron-server, glance-api): the package gate (skip when missing, fail
// when INGOT_TEST_IRONIC=1), a fresh PostgreSQL database and RabbitMQ vhost
// per service, and one process group per service with its log, start-up
// time and memory.
package servicetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/pgtest"
)

// Require skips the test when one of paths is missing, or fails it when
// INGOT_TEST_IRONIC=1 (the repository's one rule, as keystonetest).
func Require(t testing.TB, script string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			if keystonetest.Wanted() {
				t.Fatalf("%s=1 but %s is missing (run %s)", keystonetest.EnvVar, p, script)
			}
			t.Skipf("%s missing (run %s, or set %s=1 to make this a failure)", p, script, keystonetest.EnvVar)
		}
	}
}

// Database creates a fresh PostgreSQL database (dropped when the test ends)
// and returns its SQLAlchemy URL for oslo.db.
func Database(t testing.TB) string {
	t.Helper()
	u, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatalf("servicetest: database URL: %v", err)
	}
	u.Scheme = "postgresql+psycopg2"
	u.RawQuery = ""
	return u.String()
}

// rabbitmqctl is RabbitMQ's control tool (root runs it; there is no
// management plugin here).
const rabbitmqctl = "/usr/sbin/rabbitmqctl"

// Vhost creates a fresh RabbitMQ vhost for guest (deleted when the test
// ends) and returns its oslo.messaging transport URL.
func Vhost(t testing.TB) string {
	t.Helper()
	Require(t, "the RabbitMQ server package", rabbitmqctl)
	name := "ingot_t_" + randomHex(t)
	ctl := func(args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, rabbitmqctl, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("rabbitmqctl %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := ctl("add_vhost", name); err != nil {
		t.Fatalf("servicetest: %v", err)
	}
	t.Cleanup(func() {
		if err := ctl("delete_vhost", name); err != nil {
			t.Logf("servicetest: %v", err)
		}
	})
	if err := ctl("set_permissions", "-p", name, "guest", ".*", ".*", ".*"); err != nil {
		t.Fatalf("servicetest: %v", err)
	}
	return "rabbit://guest:guest@127.0.0.1:5672/" + name
}

func randomHex(t testing.TB) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

func portFree(port int) error {
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return err
	}
	return l.Close()
}
