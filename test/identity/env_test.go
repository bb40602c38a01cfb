// Package identity tests tenancy end to end: the whole service (internal/app
// with the built-in simulated Ironic) behind a real Keystone
// (internal/keystonetest) or in noauth mode, driven over HTTP as project
// A's and project B's members and readers and an admin.
package identity

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/apptest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/pgtest"
	"github.com/ingot-dev/ingot/internal/poll"
)

const baseConfig = `
poll_interval: 100ms
max_attempts: 2
ironic:
  url: sim
  sim: {nodes: 6, resource_class: baremetal, deploy_time: 200ms, undeploy_time: 100ms}
flavors:
  - {id: "1", name: bm.small, resource_class: baremetal, vcpus: 4, ram_mb: 4096, disk_gb: 10}
images:
  - {name: debian-12, url: "http://images.example/debian-12.qcow2", os_distro: debian}
networks:
  - {name: provisioning, cidr: 10.0.0.0/24}
`

// people are the template's users (keystonetest) and their roles, with
// Keystone's implied roles spelled out for noauth's X-Roles.
var people = map[string]struct {
	project string
	roles   string
}{
	"admin":    {"admin", "admin,member,reader"},
	"member-a": {"a", "member,reader"},
	"reader-a": {"a", "reader"},
	"member-b": {"b", "member,reader"},
	"reader-b": {"b", "reader"},
}

// stack is one ingot, in noauth or behind Keystone.
type stack struct {
	t    testing.TB
	app  *app.App
	url  string
	ks   *keystonetest.Env // nil in noauth
	toks map[string]string
	hc   *http.Client
}

// startStack starts ingot; ks nil means noauth. edit may change the config.
func startStack(t testing.TB, ks *keystonetest.Env, edit func(*config.Config)) *stack {
	t.Helper()
	return startStackOpts(t, ks, edit, app.Options{})
}

// startStackOpts is startStack with the app's options (a logger).
func startStackOpts(t testing.TB, ks *keystonetest.Env, edit func(*config.Config), opts app.Options) *stack {
	t.Helper()
	cfg, err := config.Parse([]byte(baseConfig))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = filepath.Join(t.TempDir(), "ingot.db")
	if os.Getenv("INGOT_TEST_STORE") == "postgres" {
		// The tenancy suite on the PostgreSQL store, one fresh database per stack.
		cfg.Database = pgtest.DSN(t)
		cfg.Ironic.Sim.State = filepath.Join(t.TempDir(), "sim.json")
	}
	cfg.Host = "ingot-matrix" // the replica the matrix's os-services and os-hosts rows name
	if ks != nil {
		cfg.Auth.Strategy = "keystone"
		cfg.Auth.Keystone.AuthURL = ks.URL
		cfg.Auth.Keystone.Username = "ingot"
		cfg.Auth.Keystone.Password = keystonetest.Password
		cfg.Auth.Keystone.ProjectName = "service"
	}
	if edit != nil {
		edit(&cfg)
	}
	a, url := apptest.Serve(t, cfg, opts)
	s := &stack{t: t, app: a, url: url, ks: ks, toks: map[string]string{},
		hc: &http.Client{Timeout: 30 * time.Second}}
	if ks != nil {
		for name := range people {
			s.toks[name] = ks.Token(t, name)
		}
	}
	return s
}

// project is the project id of a project name ("a", "b", "admin").
func (s *stack) project(name string) string {
	if s.ks == nil {
		return "project-" + name
	}
	for _, u := range s.ks.Users {
		if u.ProjectName == name {
			return u.ProjectID
		}
	}
	s.t.Fatalf("no project %s", name)
	return ""
}

// userID is the user id of a user name.
func (s *stack) userID(name string) string {
	if s.ks == nil {
		return "user-" + name
	}
	return s.ks.Users[name].ID
}

// headers are who a request is: a token, or noauth's headers.
func (s *stack) headers(user string) http.Header {
	h := http.Header{}
	if user == "" {
		return h
	}
	if s.ks != nil {
		h.Set("X-Auth-Token", s.toks[user])
		return h
	}
	p := people[user]
	h.Set("X-Auth-Project-Id", s.project(p.project))
	h.Set("X-Auth-User-Id", s.userID(user))
	h.Set("X-Roles", p.roles)
	return h
}

type reply struct {
	status int
	body   []byte
	header http.Header
}

func (r reply) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("bad JSON %s: %v", r.body, err)
	}
}

// do sends one request as user ("" for none) at microversion mv.
func (s *stack) do(user, method, path, mv string, body any) reply {
	s.t.Helper()
	return s.doWith(user, method, path, body, func(req *http.Request) {
		if mv != "" {
			req.Header.Set("X-OpenStack-Nova-API-Version", mv)
		}
	})
}

// doWith sends one request as user after edit changed it.
func (s *stack) doWith(user, method, path string, body any, edit func(*http.Request)) reply {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header = s.headers(user)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	edit(req)
	resp, err := s.hc.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, body: raw, header: resp.Header}
}

// must sends a request that must answer want.
func (s *stack) must(user, method, path string, body any, want int) reply {
	s.t.Helper()
	r := s.do(user, method, path, "2.90", body)
	if r.status != want {
		s.t.Fatalf("%s %s as %s: %d %s, want %d", method, path, user, r.status, r.body, want)
	}
	return r
}

// createServer makes a server as user and returns its id and create request id.
func (s *stack) createServer(user, name string, extra map[string]any) (id, req string) {
	s.t.Helper()
	srv := map[string]any{"name": name, "imageRef": "debian-12", "flavorRef": "1", "networks": "auto"}
	for k, v := range extra {
		srv[k] = v
	}
	r := s.do(user, "POST", "/v2.1/servers", "2.90", map[string]any{"server": srv})
	if r.status != http.StatusAccepted {
		s.t.Fatalf("create %s as %s: %d %s", name, user, r.status, r.body)
	}
	var out struct{ Server struct{ ID string } }
	r.decode(s.t, &out)
	var acts struct {
		InstanceActions []struct {
			RequestID string `json:"request_id"`
		} `json:"instanceActions"`
	}
	s.must(user, "GET", "/v2.1/servers/"+out.Server.ID+"/os-instance-actions", nil, 200).decode(s.t, &acts)
	return out.Server.ID, acts.InstanceActions[0].RequestID
}

// waitActive polls as user until the server is ACTIVE (deadline 30 s).
func (s *stack) waitActive(user, id string) {
	s.t.Helper()
	poll.Until(s.t, 30*time.Second, "server "+id+" ACTIVE", func() (bool, string) {
		var out struct{ Server struct{ Status string } }
		s.must(user, "GET", "/v2.1/servers/"+id, nil, 200).decode(s.t, &out)
		if out.Server.Status == "ERROR" {
			s.t.Fatalf("server %s went ERROR", id)
		}
		return out.Server.Status == "ACTIVE", out.Server.Status
	})
}

func contains(body []byte, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" && strings.Contains(string(body), sec) {
			return sec
		}
	}
	return ""
}

// imageID is debian-12's id (config derives it from the name).
var imageID = func() string {
	c, err := config.Parse([]byte(baseConfig))
	if err != nil {
		panic(err)
	}
	return c.Images[0].ID
}()

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }

// newApp builds (and closes) an app, for start-up errors.
func newApp(t testing.TB, cfg config.Config) (*app.App, error) {
	a, err := app.New(context.Background(), cfg, app.Options{})
	if a != nil {
		a.Close()
	}
	return a, err
}
