package cindertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/pgtest"
)

// RSS is the resident memory of the three daemons, in KiB.
func (e *Env) RSS() int64 {
	var total int64
	for _, d := range e.daemons {
		total += d.rss()
	}
	return total
}

// ServiceTokenUser makes a user in project service with the role service
// only: its token, sent as X-Service-Token, is what Cinder takes for a
// service's call (keystone_authtoken service_token_roles).
func (e *Env) ServiceTokenUser(t testing.TB, name string) keystonetest.User {
	t.Helper()
	return e.Keystone.AddUser(t, name, "service", "service")
}

// Get does GET URL+path with token at Microversion and decodes the JSON
// answer into out; it fails the test on anything but 200.
func (e *Env) Get(t testing.TB, token, path string, out any) {
	t.Helper()
	if err := e.get(context.Background(), token, path, out); err != nil {
		t.Fatalf("cindertest: %v", err)
	}
}

func (e *Env) get(ctx context.Context, token, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.URL+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("OpenStack-API-Version", "volume "+Microversion)
	resp, err := e.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s %s", path, resp.Status, raw)
	}
	return json.Unmarshal(raw, out)
}

// pools lists the scheduler's pools (admin only).
func (e *Env) pools(ctx context.Context, adminToken string) ([]string, error) {
	var out struct {
		Pools []struct{ Name string } `json:"pools"`
	}
	if err := e.get(ctx, adminToken, "/scheduler-stats/get_pools", &out); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(out.Pools))
	for _, p := range out.Pools {
		names = append(names, p.Name)
	}
	return names, nil
}

// stop stops the daemons together (each takes seconds).
func (e *Env) stop() {
	var wg sync.WaitGroup
	for _, d := range e.daemons {
		wg.Go(d.stop)
	}
	wg.Wait()
}

// database creates a fresh PostgreSQL database (dropped when the test
// ends) and returns its SQLAlchemy URL.
func database(t testing.TB) string {
	t.Helper()
	u, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatalf("cindertest: database URL: %v", err)
	}
	u.Scheme, u.RawQuery = "postgresql+psycopg2", ""
	return u.String()
}

// vhost creates a fresh RabbitMQ vhost for guest (deleted when the test
// ends) and returns its transport URL.
func vhost(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "ingot_cinder_" + hex.EncodeToString(b[:])
	ctl := func(args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, rabbitmqctl, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("rabbitmqctl %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := ctl("add_vhost", name); err != nil {
		t.Fatalf("cindertest: %v", err)
	}
	t.Cleanup(func() {
		if err := ctl("delete_vhost", name); err != nil {
			t.Logf("cindertest: %v", err)
		}
	})
	if err := ctl("set_permissions", "-p", name, "guest", ".*", ".*", ".*"); err != nil {
		t.Fatalf("cindertest: %v", err)
	}
	return "rabbit://guest:guest@127.0.0.1:5672/" + name
}
