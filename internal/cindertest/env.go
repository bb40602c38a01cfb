package cindertest

import (
	"bytes"
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

// Do sends method path (under URL) with token at Microversion, body as
// JSON when not nil, decodes a JSON answer into out when not nil, and
// returns the status; a transport error fails the test.
func (e *Env) Do(t testing.TB, token, method, path string, body, out any) int {
	t.Helper()
	status, err := e.do(context.Background(), token, method, path, body, out)
	if err != nil {
		t.Fatalf("cindertest: %s %s: %v", method, path, err)
	}
	return status
}

func (e *Env) do(ctx context.Context, token, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.URL+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("OpenStack-API-Version", "volume "+Microversion)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode/100 == 2 && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s: %w", raw, err)
		}
	}
	return resp.StatusCode, nil
}

// Counts are the volumes and attachments of every project (as the admin:
// what the fault scenarios count before and after).
func (e *Env) Counts(t testing.TB) (volumes, attachments int) {
	t.Helper()
	admin := e.Keystone.Token(t, "admin")
	var vs struct {
		Volumes []struct{ ID string } `json:"volumes"`
	}
	var as struct {
		Attachments []struct{ ID string } `json:"attachments"`
	}
	for path, out := range map[string]any{"/volumes?all_tenants=1": &vs, "/attachments?all_tenants=1": &as} {
		if st := e.Do(t, admin, http.MethodGet, path, nil, out); st != http.StatusOK {
			t.Fatalf("cindertest: GET %s: %d", path, st)
		}
	}
	return len(vs.Volumes), len(as.Attachments)
}

// pools lists the scheduler's pools (admin only).
func (e *Env) pools(ctx context.Context, adminToken string) ([]string, error) {
	var out struct {
		Pools []struct{ Name string } `json:"pools"`
	}
	if st, err := e.do(ctx, adminToken, http.MethodGet, "/scheduler-stats/get_pools", nil, &out); err != nil || st != http.StatusOK {
		return nil, fmt.Errorf("get_pools: %d %v", st, err)
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
