package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/poll"
)

const baseConfig = `
poll_interval: 100ms
ironic:
  url: sim
  sim: {nodes: 4, resource_class: baremetal, deploy_time: 100ms, undeploy_time: 50ms}
flavors:
  - {id: "1", name: bm.small, resource_class: baremetal, vcpus: 4, ram_mb: 4096, disk_gb: 10}
images:
  - {name: debian-12, url: "http://images.example/debian-12.qcow2"}
networks:
  - {name: provisioning, cidr: 10.0.0.0/24}
`

// env is one ingot (app in-process, its built-in simulator) served as
// `ingot serve` serves it: the console and the API on one listener.
type env struct {
	t   *testing.T
	app *app.App
	url string
	ks  *keystonetest.Env
}

func start(t *testing.T, ks *keystonetest.Env) *env { return startWith(t, ks, nil) }

func startWith(t *testing.T, ks *keystonetest.Env, edit func(*config.Config)) *env {
	t.Helper()
	cfg, err := config.Parse([]byte(baseConfig))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = filepath.Join(t.TempDir(), "ingot.db")
	if ks != nil {
		cfg.Auth.Strategy = "keystone"
		cfg.Auth.Keystone.AuthURL = ks.URL
		cfg.Auth.Keystone.Username = "ingot"
		cfg.Auth.Keystone.Password = keystonetest.Password
		cfg.Auth.Keystone.ProjectName = "service"
		cfg.Auth.TokenCacheTTL = 0 // a revoked token is refused at once
	}
	if edit != nil {
		edit(&cfg)
	}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	if ks != nil {
		cfg.Auth.TokenCacheTTL = 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		a.Close()
	})
	return &env{t: t, app: a, url: "http://" + ln.Addr().String(), ks: ks}
}

// api calls the compute API (as token's user, or noauth's default).
func (e *env) api(token, method, path string, body, out any) int {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.url+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("OpenStack-API-Version", "compute 2.90")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatalf("%s: %v", raw, err)
		}
	}
	return resp.StatusCode
}

func (e *env) create(token, name string) string {
	e.t.Helper()
	var out struct{ Server struct{ ID string } }
	body := map[string]any{"server": map[string]any{"name": name, "imageRef": "debian-12", "flavorRef": "1", "networks": "auto"}}
	if code := e.api(token, "POST", "/v2.1/servers", body, &out); code != 202 {
		e.t.Fatalf("create %s: %d", name, code)
	}
	return out.Server.ID
}

// user is one browser-like client: a cookie jar, no automatic redirects.
type user struct {
	e  *env
	hc *http.Client
}

func (e *env) user() *user {
	jar, _ := cookiejar.New(nil)
	return &user{e: e, hc: &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	body   string
	header http.Header
}

func (u *user) get(path string) page {
	u.e.t.Helper()
	resp, err := u.hc.Get(u.e.url + path)
	if err != nil {
		u.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, string(b), resp.Header}
}

// post sends a form as a browser of this console would (Origin set)
// unless origin says otherwise ("-": none).
func (u *user) post(path string, form url.Values, origin string) page {
	u.e.t.Helper()
	req, _ := http.NewRequest("POST", u.e.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	switch origin {
	case "":
		req.Header.Set("Origin", u.e.url)
	case "-":
	default:
		req.Header.Set("Origin", origin)
	}
	resp, err := u.hc.Do(req)
	if err != nil {
		u.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, string(b), resp.Header}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, p page) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF token in the page (%d):\n%.2000s", p.status, p.body)
	}
	return m[1]
}

var rowRE = regexp.MustCompile(`<tr data-id="([^"]+)" data-name="([^"]+)">`)

func rows(p page) []string {
	var out []string
	for _, m := range rowRE.FindAllStringSubmatch(p.body, -1) {
		out = append(out, m[2])
	}
	return out
}

func (e *env) waitStatus(token, id, status string) {
	e.t.Helper()
	poll.Until(e.t, 20*time.Second, "server "+id+" "+status, func() (bool, string) {
		var out struct{ Server struct{ Status string } }
		code := e.api(token, "GET", "/v2.1/servers/"+id, nil, &out)
		return code == 200 && out.Server.Status == status || status == "gone" && code == 404, fmt.Sprintf("%d %s", code, out.Server.Status)
	})
}

var nextRE = regexp.MustCompile(`href="([^"]+)" id="next-page"`)
