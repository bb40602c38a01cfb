package identity

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/keystonetest"
)

type auditLine struct {
	Msg        string
	Audit      bool
	Kind       string
	RequestID  string `json:"request_id"`
	Method     string
	Route      string
	User       string
	Project    string
	Rule       string
	Reason     string
	Resource   string
	Status     int
	Suppressed int
}

func auditLines(t *testing.T, logs *syncBuffer) []auditLine {
	t.Helper()
	var out []auditLine
	for line := range strings.Lines(logs.String()) {
		var l auditLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if l.Audit {
			out = append(out, l)
		}
	}
	return out
}

// only is the one audit line of a request (failing when there are more).
func only(t *testing.T, logs *syncBuffer, r reply) auditLine {
	t.Helper()
	id := r.header.Get("X-Openstack-Request-Id")
	var got []auditLine
	for _, l := range auditLines(t, logs) {
		if l.RequestID == id {
			got = append(got, l)
		}
	}
	if len(got) != 1 {
		t.Fatalf("request %s (%d): %d audit lines %+v, want 1", id, r.status, len(got), got)
	}
	return got[0]
}

// TestAuditTrail: behind Keystone, a failed login, a policy denial and
// each state-changing request write one INFO line with audit=true (who,
// what, which resource, the outcome; never the token); a flood of 401s
// writes a bounded number of lines and then says how many it suppressed.
// The API answers any Host (a token is no ambient credential); the
// console, whose session is a cookie, still refuses one.
func TestAuditTrail(t *testing.T) {
	ks := keystonetest.Start(t)
	var logs syncBuffer
	s := startStackOpts(t, ks, nil, app.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})

	const bogus = "gAAAAABbogus-token-never-logged"
	r := s.doWith("", "GET", "/v2.1/servers", nil, func(req *http.Request) { req.Header.Set("X-Auth-Token", bogus) })
	if r.status != 401 {
		t.Fatalf("bogus token: %d", r.status)
	}
	if l := only(t, &logs, r); l.Kind != "auth_failure" || !strings.HasPrefix(l.Reason, "token rejected") || l.Route != "/v2.1/servers" || l.Status != 401 {
		t.Errorf("failed login: %+v", l)
	}
	if strings.Contains(logs.String(), bogus) {
		t.Error("the token is in the log")
	}

	r = s.do("member-a", "GET", "/v2.1/os-hypervisors", "2.90", nil)
	if r.status != 403 {
		t.Fatalf("member's os-hypervisors: %d", r.status)
	}
	if l := only(t, &logs, r); l.Kind != "policy_denial" || l.Rule != "os_compute_api:os-hypervisors:list" || l.User != s.userID("member-a") ||
		l.Project != s.project("a") || l.Route != "/v2.1/os-hypervisors" || l.Method != "GET" {
		t.Errorf("denial: %+v", l)
	}

	r = s.do("member-a", "POST", "/v2.1/servers", "2.90", map[string]any{"server": map[string]any{
		"name": "audited", "imageRef": "debian-12", "flavorRef": "1", "networks": "auto"}})
	if r.status != 202 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var sv struct{ Server struct{ ID string } }
	r.decode(t, &sv)
	if l := only(t, &logs, r); l.Kind != "change" || l.Route != "/v2.1/servers" || l.Resource != sv.Server.ID || l.Status != 202 || l.User != s.userID("member-a") {
		t.Errorf("create: %+v", l)
	}
	r = s.do("member-b", "DELETE", "/v2.1/servers/"+sv.Server.ID, "2.90", nil)
	if l := only(t, &logs, r); l.Kind != "change" || l.Route != "/v2.1/servers/{id}" || l.Resource != sv.Server.ID || l.Status != 404 || l.Project != s.project("b") {
		t.Errorf("another project's delete: %+v", l)
	}

	if r := s.doWith("member-a", "GET", "/v2.1/flavors", nil, func(req *http.Request) { req.Host = "evil.example" }); r.status != 200 {
		t.Errorf("Keystone, Host evil.example: %d, want 200", r.status)
	}
	if r := s.doWith("", "GET", "/ui/", nil, func(req *http.Request) { req.Host = "evil.example" }); r.status != http.StatusMisdirectedRequest {
		t.Errorf("Keystone, console with Host evil.example: %d, want 421", r.status)
	}

	// A flood of 1,000 401s.
	before := len(auditLines(t, &logs))
	start := time.Now()
	sent := 0
	noToken := func() {
		if r := s.do("", "GET", "/v2.1/servers", "", nil); r.status != 401 {
			t.Fatalf("no token: %d", r.status)
		}
		sent++
	}
	for range 1000 {
		noToken()
	}
	suppressed := func() (lines, n int) {
		for _, l := range auditLines(t, &logs)[before:] {
			switch l.Msg {
			case "audit":
				lines++
			case "audit suppressed":
				n += l.Suppressed
			}
		}
		return lines, n
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		// Done when every 401 is a line or counted by a suppressed line.
		if lines, n := suppressed(); (n > 0 && lines+n == sent) || time.Now().After(deadline) {
			break
		}
		noToken() // the bucket refills: the next line says what was dropped
	}
	took := time.Since(start)
	lines, n := suppressed()
	if limit := 50 + int(5*took.Seconds()) + 1; lines > limit || n == 0 || lines+n != sent {
		t.Errorf("%d 401s in %s: %d lines, %d suppressed (want at most %d lines, the rest counted)", sent, took, lines, n, limit)
	}
	t.Logf("%d 401s in %s: %d audit lines, %d suppressed", sent, took.Round(time.Millisecond), lines, n)
}
