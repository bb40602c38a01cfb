package identity

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/testlog"
)

// TestNonJSONBodies: a text/plain or form body (what a web page of another
// origin can send without a CORS preflight) is 415 and changes nothing.
func TestNonJSONBodies(t *testing.T) {
	s := startStack(t, nil, nil)
	id, _ := s.createServer("member-a", "victim", nil)
	body := `{"server": {"name": "csrf", "imageRef": "` + imageID + `", "flavorRef": "1", "networks": "auto"}}`
	for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
		for _, c := range []struct{ path, body string }{
			{"/v2.1/servers", body},
			{"/v2.1/servers/" + id + "/action", `{"forceDelete": null}`},
		} {
			req, _ := http.NewRequest("POST", s.url+c.path, strings.NewReader(c.body))
			req.Header = s.headers("member-a")
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			resp, err := s.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(string(raw), `"badMediaType"`) {
				t.Errorf("POST %s as %q: %d %s, want 415", c.path, ct, resp.StatusCode, raw)
			}
		}
	}
	var list struct{ Servers []struct{ Name string } }
	s.must("member-a", "GET", "/v2.1/servers", nil, 200).decode(t, &list)
	if len(list.Servers) != 1 || list.Servers[0].Name != "victim" {
		t.Errorf("servers after the refused posts: %+v", list.Servers)
	}
	var sv struct {
		Server struct {
			TaskState *string `json:"OS-EXT-STS:task_state"`
		}
	}
	s.must("member-a", "GET", "/v2.1/servers/"+id, nil, 200).decode(t, &sv)
	if sv.Server.TaskState != nil && *sv.Server.TaskState == "deleting" {
		t.Error("a text/plain forceDelete deleted the server")
	}
}

func selfLink(t *testing.T, s *stack, host string, hdr map[string]string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", s.url+"/v2.1/", nil)
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Version struct{ Links []struct{ Href string } }
	}
	if err := jsonDecode(resp.Body, &doc); err != nil || len(doc.Version.Links) == 0 {
		t.Fatalf("version doc: %v", err)
	}
	return doc.Version.Links[0].Href
}

// TestLinksIgnoreForgedHost: links come from api.public_url, else the
// address the connection arrived on; Host and X-Forwarded-* are believed
// only from a trusted proxy (whose forwarded host must be one ingot
// answers to: TestDNSRebinding).
func TestLinksIgnoreForgedHost(t *testing.T) {
	forged := map[string]string{"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"}
	s := startStack(t, nil, nil)
	if got := selfLink(t, s, "127.0.0.9", forged); got != s.url+"/v2.1/" {
		t.Errorf("forged Host and X-Forwarded-*: self link %s, want %s/v2.1/", got, s.url)
	}
	p := startStack(t, nil, func(c *config.Config) { c.API.PublicURL = "https://compute.example:8774" })
	if got := selfLink(t, p, "127.0.0.9", forged); got != "https://compute.example:8774/v2.1/" {
		t.Errorf("public_url: self link %s", got)
	}
	tp := startStack(t, nil, func(c *config.Config) {
		c.API.TrustedProxies = []string{"127.0.0.1/32"}
		c.API.AllowedHosts = []string{"proxy.example"}
	})
	if got := selfLink(t, tp, "", map[string]string{"X-Forwarded-Host": "proxy.example", "X-Forwarded-Proto": "https"}); got != "https://proxy.example/v2.1/" {
		t.Errorf("trusted proxy: self link %s, want the forwarded host", got)
	}
	if r := tp.doHost("", "127.0.0.1", "GET", "/v2.1/", nil, map[string]string{"X-Forwarded-Host": `evil.example/"><script>`}); r.status != http.StatusMisdirectedRequest {
		t.Errorf("trusted proxy with a malformed host: %d %s", r.status, r.body)
	}
}

// TestNameRegexCapped: a 27 KB name filter (a regular expression) is
// refused at once instead of costing a second of CPU and hundreds of MB;
// the longest accepted pattern compiles fast.
func TestNameRegexCapped(t *testing.T) {
	s := startStack(t, nil, nil)
	s.createServer("member-a", "web1", nil)
	long := strings.Repeat("(a|b)*c{1,100}", 27*1024/14)
	start := time.Now()
	r := s.do("member-a", "GET", "/v2.1/servers/detail?name="+url.QueryEscape(long), "2.90", nil)
	took := time.Since(start)
	if r.status != 400 || !contains2(r.body, "longer than 255") {
		t.Fatalf("27 KB regex: %d %.200s", r.status, r.body)
	}
	if took > 500*time.Millisecond {
		t.Errorf("27 KB regex refused in %s", took)
	}
	worst := strings.Repeat("(x{1,1000}){1,1000}", 255/19) // RE2 refuses what is too large
	start = time.Now()
	r = s.do("member-a", "GET", "/v2.1/servers/detail?name="+url.QueryEscape(worst[:min(len(worst), 255)]), "2.90", nil)
	if took := time.Since(start); r.status >= 500 || took > 2*time.Second {
		t.Errorf("255-character pattern: %d in %s", r.status, took)
	}
	r = s.do("member-a", "GET", "/v2.1/servers?name="+url.QueryEscape("^web[0-9]$"), "2.90", nil)
	if r.status != 200 || !contains2(r.body, "web1") {
		t.Errorf("a plain pattern: %d %s", r.status, r.body)
	}
}

// TestControlCharacters: names, tags, metadata and extra specs with
// control characters are 400 — never stored (PostgreSQL's TEXT refuses a
// NUL: run with INGOT_TEST_STORE=postgres) and never shown raw.
func TestControlCharacters(t *testing.T) {
	s := startStack(t, nil, nil)
	id, _ := s.createServer("member-a", "plain", nil)
	s.waitActive("member-a", id)
	s.must("admin", "POST", "/v2.1/flavors", map[string]any{"flavor": map[string]any{"name": "cc", "id": "cc", "ram": 1, "vcpus": 1, "disk": 1}}, 200)
	for _, name := range []string{"bad\nname", "bad\x00", "tab\tbed", "esc\x1b[31m", "del\x7f", "c1\u0085", " lead", "trail "} {
		r := s.do("member-a", "POST", "/v2.1/servers", "2.90", map[string]any{"server": map[string]any{
			"name": name, "imageRef": imageID, "flavorRef": "1", "networks": "auto"}})
		if r.status != 400 {
			t.Errorf("server name %q: %d %s", name, r.status, r.body)
		}
		r = s.do("member-a", "POST", "/volume/v3/"+s.project("a")+"/volumes", "", map[string]any{"volume": map[string]any{"name": name, "size": 1}})
		if r.status != 400 && !strings.HasPrefix(name, " ") && !strings.HasSuffix(name, " ") {
			t.Errorf("volume name %q: %d %s", name, r.status, r.body)
		}
		r = s.do("member-a", "POST", "/v2.1/os-keypairs", "2.90", map[string]any{"keypair": map[string]any{"name": name, "public_key": ed25519Key(t)}})
		if r.status != 400 {
			t.Errorf("keypair name %q: %d %s", name, r.status, r.body)
		}
		if strings.TrimSpace(name) != name {
			continue // a space is fine in a tag, metadata or an extra spec
		}
		for _, c := range []struct {
			what, method, path string
			body               any
		}{
			{"create tags", "POST", "/v2.1/servers", map[string]any{"server": map[string]any{
				"name": "tagged", "imageRef": imageID, "flavorRef": "1", "networks": "auto", "tags": []string{"ok", name}}}},
			{"create metadata value", "POST", "/v2.1/servers", map[string]any{"server": map[string]any{
				"name": "md", "imageRef": imageID, "flavorRef": "1", "networks": "auto", "metadata": map[string]string{"k": name}}}},
			{"tags", "PUT", "/v2.1/servers/" + id + "/tags", map[string]any{"tags": []string{name}}},
			{"tag", "PUT", "/v2.1/servers/" + id + "/tags/" + url.PathEscape(name), nil},
			{"metadata key", "POST", "/v2.1/servers/" + id + "/metadata", map[string]any{"metadata": map[string]string{name: "v"}}},
			{"metadata value", "PUT", "/v2.1/servers/" + id + "/metadata", map[string]any{"metadata": map[string]string{"k": name}}},
			{"metadata item", "PUT", "/v2.1/servers/" + id + "/metadata/k", map[string]any{"meta": map[string]string{"k": name}}},
			{"rename", "PUT", "/v2.1/servers/" + id, map[string]any{"server": map[string]any{"name": name}}},
			{"description", "PUT", "/v2.1/servers/" + id, map[string]any{"server": map[string]any{"description": name}}},
		} {
			if r := s.do("member-a", c.method, c.path, "2.90", c.body); r.status != 400 {
				t.Errorf("%s %q: %d %.300s", c.what, name, r.status, r.body)
			}
		}
		for _, c := range []struct {
			what, path string
			body       any
		}{
			{"flavor name", "/v2.1/flavors", map[string]any{"flavor": map[string]any{"name": name, "ram": 1, "vcpus": 1, "disk": 1}}},
			{"extra spec value", "/v2.1/flavors/cc/os-extra_specs", map[string]any{"extra_specs": map[string]string{"hw:x": name}}},
			{"server group name", "/v2.1/os-server-groups", map[string]any{"server_group": map[string]any{"name": name, "policy": "anti-affinity"}}},
			{"aggregate name", "/v2.1/os-aggregates", map[string]any{"aggregate": map[string]any{"name": name}}},
		} {
			if r := s.do("admin", "POST", c.path, "2.90", c.body); r.status != 400 {
				t.Errorf("%s %q: %d %.300s", c.what, name, r.status, r.body)
			}
		}
	}
	var tags struct{ Tags []string }
	s.must("member-a", "GET", "/v2.1/servers/"+id+"/tags", nil, 200).decode(t, &tags)
	if len(tags.Tags) != 0 {
		t.Errorf("tags stored: %q", tags.Tags)
	}
	r := s.do("member-a", "PUT", "/v2.1/servers/"+id+"/tags", "2.90", map[string]any{"tags": []string{"in space", "ünïcode"}})
	if r.status != 200 {
		t.Errorf("printable tags: %d %s", r.status, r.body)
	}
	// Metadata keys are Nova's pattern: letters, digits and "-_:. ".
	for _, k := range []string{"a/b", "ключ", "owner\u2066", "k=v", ""} {
		if r := s.do("member-a", "POST", "/v2.1/servers/"+id+"/metadata", "2.90", map[string]any{"metadata": map[string]string{k: "v"}}); r.status != 400 {
			t.Errorf("metadata key %q: %d %s", k, r.status, r.body)
		}
	}
	if r := s.do("member-a", "POST", "/v2.1/servers/"+id+"/metadata", "2.90", map[string]any{"metadata": map[string]string{"Team A:web-1.x_y": "ünïcode \u202e value"}}); r.status != 200 {
		t.Errorf("a key of Nova's pattern: %d %s", r.status, r.body)
	}
}

// serveRaw starts ingot with the given API settings and returns its address.
func serveRaw(t *testing.T, edit func(*config.Config)) (*stack, string) {
	t.Helper()
	s := startStack(t, nil, edit)
	return s, strings.TrimPrefix(s.url, "http://")
}

// TestSlowBodyClosed: a client that sends its headers and then trickles
// (or stops sending) its body is cut off by api.read_timeout.
func TestSlowBodyClosed(t *testing.T) {
	_, addr := serveRaw(t, func(c *config.Config) { c.API.ReadTimeout = time.Second })
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v2.1/servers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Roles: member\r\nContent-Length: 100000\r\n\r\n{\"server\":")
	start := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	// The server gives up reading: the handler's body read fails, and the
	// connection is closed (whatever it answers first).
	_, err = io.ReadAll(conn)
	took := time.Since(start)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %s with a stalled body", took)
	}
	if took > 5*time.Second {
		t.Errorf("stalled body closed after %s, read_timeout is 1 s", took)
	}
	t.Logf("a stalled body was cut off after %s (read_timeout 1 s)", took.Round(time.Millisecond))
}

// TestConnectionCap: with api.max_connections 2, connections idle on a
// keep-alive (or silent) are closed to make room at once, while two that
// carry a request (a body still arriving) keep a third waiting until one
// closes — a flood of idle connections cannot stall the API (issue: 1,024
// idle connections made a request wait for the header timeout).
func TestConnectionCap(t *testing.T) {
	_, addr := serveRaw(t, func(c *config.Config) { c.API.MaxConnections, c.API.MaxConnectionsPerClient = 2, 2 })
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	healthz := func(c net.Conn) <-chan error {
		got := make(chan error, 1)
		go func() {
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err == nil {
				resp.Body.Close()
			}
			got <- err
		}()
		return got
	}
	wait := func(got <-chan error, what string) {
		t.Helper()
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(5 * time.Second): // read_header_timeout is 10 s: only eviction answers sooner
			t.Fatalf("%s: not served", what)
		}
	}
	// Two keep-alives left idle, then one silent connection: all served.
	wait(healthz(dial()), "first keep-alive")
	wait(healthz(dial()), "second keep-alive")
	dial()
	wait(healthz(dial()), "a request behind idle connections")

	// Two connections busy with a request whose body is still coming.
	// The server's "100 Continue" says its handler is reading the body:
	// the request is in flight.
	for range 2 {
		c := dial()
		fmt.Fprintf(c, "POST /v2.1/os-keypairs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
			t.Fatalf("busy connection: %q, %v (want 100 Continue)", line, err)
		}
		_ = c.SetReadDeadline(time.Time{})
	}
	third := dial()
	got := healthz(third)
	select {
	case err := <-got:
		t.Fatalf("a third connection was served while two carried requests (err %v)", err)
	case <-time.After(300 * time.Millisecond): // what must not happen did not happen in this window
	}
}

// TestNoauthRemote: noauth refuses a non-loopback listen address unless
// auth.allow_insecure_remote, and then warns at every start.
func TestNoauthRemote(t *testing.T) {
	if _, err := config.Parse([]byte("listen: 0.0.0.0:8774\n")); err == nil || !strings.Contains(err.Error(), "auth.strategy") {
		t.Fatalf("noauth on 0.0.0.0: %v", err)
	}
	if _, err := config.Parse([]byte("listen: ':8774'\n")); err == nil {
		t.Fatal("noauth on every interface accepted")
	}
	cfg, err := config.Parse([]byte("listen: 0.0.0.0:8774\nauth: {allow_insecure_remote: true}\n" + baseConfig))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = filepath.Join(t.TempDir(), "ingot.db")
	var logs syncBuffer
	a, err := app.New(context.Background(), cfg, app.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if !strings.Contains(logs.String(), "noauth on a non-loopback address") {
		t.Errorf("no warning at start; logs:\n%s", logs.String())
	}
}

// TestSimAdminNotOnAPIPort: the simulator's /_sim/ admin API is on its
// own loopback listener, never on ingot's API port.
func TestSimAdminNotOnAPIPort(t *testing.T) {
	s := startStack(t, nil, nil)
	for _, p := range []string{"/_sim/", "/_sim/nodes", "/v1/nodes"} {
		if r := s.do("admin", "GET", p, "", nil); r.status != 404 {
			t.Errorf("API port answers %s: %d", p, r.status)
		}
	}
	if _, err := config.Parse([]byte("ironic: {url: sim, sim: {listen: '0.0.0.0:6385'}}\n")); err == nil {
		t.Error("a non-loopback simulator listen address was accepted")
	}
}

// syncBuffer is what the app logged.
type syncBuffer = testlog.Buffer
