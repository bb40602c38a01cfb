package ui_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/config"
)

// TestCSRF: a delete from the console needs the session's CSRF token, an
// Origin (or Referer) of this console and the confirmation; each missing
// piece is refused and leaves the server as it was.
func TestCSRF(t *testing.T) {
	e := start(t, nil)
	id := e.create("", "victim")
	u := e.user()
	confirm := u.get("/ui/servers/" + id + "/delete")
	if confirm.status != 200 || !strings.Contains(confirm.body, `id="confirm-action"`) {
		t.Fatalf("confirmation page: %d\n%.1500s", confirm.status, confirm.body)
	}
	token := csrfOf(t, confirm)
	form := func(csrf string) url.Values {
		return url.Values{"csrf": {csrf}, "confirm": {"yes"}, "name": {"victim"}}
	}
	other := e.user()
	otherToken := csrfOf(t, other.get("/ui/servers/"+id+"/delete"))
	refused := []struct {
		name   string
		u      *user
		form   url.Values
		origin string
		want   int
	}{
		{"no token", u, url.Values{"confirm": {"yes"}}, "", http.StatusForbidden},
		{"another session's token", u, form(otherToken), "", http.StatusForbidden},
		{"a token without its session", e.user(), form(token), "", http.StatusForbidden},
		{"another site's Origin", u, form(token), "http://evil.example", http.StatusForbidden},
		{"no Origin or Referer", u, form(token), "-", http.StatusForbidden},
		{"not confirmed", u, url.Values{"csrf": {token}}, "", http.StatusBadRequest},
	}
	for _, c := range refused {
		p := c.u.post("/ui/servers/"+id+"/delete", c.form, c.origin)
		if p.status != c.want {
			t.Errorf("%s: %d, want %d", c.name, p.status, c.want)
		}
		var out struct {
			Server struct {
				Status string
				Task   *string `json:"OS-EXT-STS:task_state"`
			}
		}
		if code := e.api("", "GET", "/v2.1/servers/"+id, nil, &out); code != 200 || out.Server.Task != nil && *out.Server.Task == "deleting" {
			t.Fatalf("%s: the server was deleted (%d %s)", c.name, code, out.Server.Status)
		}
	}
	p := u.post("/ui/servers/"+id+"/delete", form(token), "")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/ui/servers?done=") {
		t.Fatalf("confirmed delete: %d %s", p.status, p.header.Get("Location"))
	}
	e.waitStatus("", id, "gone")
}

// TestHostAndHeaders: a Host that is a name other than localhost (a
// DNS-rebinding page) is refused; pages carry a CSP that allows nothing
// of another origin, and are not framed.
func TestHostAndHeaders(t *testing.T) {
	e := start(t, nil)
	req, _ := http.NewRequest("GET", e.url+"/ui/", nil)
	req.Host = "evil.example:8774"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Host evil.example: %d, want 421", resp.StatusCode)
	}
	p := e.user().get("/ui/")
	if p.status != 200 {
		t.Fatalf("fleet: %d", p.status)
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	for _, ck := range p.header.Values("Set-Cookie") {
		if !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Strict") {
			t.Errorf("cookie %q: want HttpOnly and SameSite=Strict", ck)
		}
	}
	// The API is untouched by the console's routes.
	if code := e.api("", "GET", "/v2.1/servers", nil, nil); code != 200 {
		t.Errorf("API behind the console: %d", code)
	}
}

// TestPaging: the list is the API's page (limit and marker) — never
// everything: 5 servers at 2 a page are three pages, the last without a
// next link; the status filter and the search go to the API.
func TestPaging(t *testing.T) {
	e := start(t, nil)
	for _, n := range []string{"a1", "a2", "b1", "b2", "c1"} {
		e.create("", n)
	}
	u := e.user()
	var seen []string
	path := "/ui/servers?limit=2"
	for i := 0; path != ""; i++ {
		p := u.get(path)
		r := rows(p)
		if i < 2 && len(r) != 2 || i == 2 && len(r) != 1 || i > 2 {
			t.Fatalf("page %d: %v", i+1, r)
		}
		seen = append(seen, r...)
		path = ""
		if m := nextRE.FindStringSubmatch(p.body); m != nil {
			path = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	if strings.Join(seen, ",") != "a1,a2,b1,b2,c1" {
		t.Errorf("pages listed %v", seen)
	}
	if r := rows(u.get("/ui/servers?q=b")); strings.Join(r, ",") != "b1,b2" {
		t.Errorf("search b: %v", r)
	}
	if r := rows(u.get("/ui/servers?q=.")); len(r) != 0 {
		t.Errorf("search for a dot matched %v: the search is literal, not a pattern", r)
	}
	if r := rows(u.get("/ui/servers?status=ERROR")); len(r) != 0 {
		t.Errorf("status ERROR: %v", r)
	}
}

// TestPowerActionsWired: the reboot, stop and start buttons appear once
// the policy has Nova's rules for them (here from a policy file, as the
// day-2 API brings them), and a confirmed one is the API's server action:
// the API answers it (202 once it serves the action, else its own 400
// naming it), and a stop is not offered to a server the policy bars.
func TestPowerActionsWired(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(`"os_compute_api:servers:reboot": "rule:project_member_or_admin"
"os_compute_api:servers:stop": "!"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := startWith(t, nil, func(c *config.Config) { c.Auth.PolicyFile = pol })
	id := e.create("", "web")
	e.waitStatus("", id, "ACTIVE")
	u := e.user()
	p := u.get("/ui/servers/" + id)
	if !strings.Contains(p.body, `id="action-reboot"`) || !strings.Contains(p.body, `id="action-reboot-hard"`) {
		t.Fatalf("no reboot buttons with the rule in the policy:\n%.3000s", p.body)
	}
	if strings.Contains(p.body, `id="action-stop"`) {
		t.Errorf("stop offered although the policy says never")
	}
	if strings.Contains(p.body, `id="action-start"`) {
		t.Errorf("start offered without its rule")
	}
	token := csrfOf(t, u.get("/ui/servers/"+id+"/reboot"))
	r := u.post("/ui/servers/"+id+"/reboot", url.Values{"csrf": {token}, "confirm": {"yes"}, "name": {"web"}}, "")
	switch {
	case r.status == http.StatusSeeOther:
		// The API serves reboot: its instance actions record it.
		var acts struct {
			InstanceActions []struct{ Action string } `json:"instanceActions"`
		}
		e.api("", "GET", "/v2.1/servers/"+id+"/os-instance-actions", nil, &acts)
		if len(acts.InstanceActions) == 0 || acts.InstanceActions[0].Action != "reboot" {
			t.Errorf("after the console's reboot the server's actions are %+v", acts.InstanceActions)
		}
	case r.status == http.StatusBadRequest && strings.Contains(r.body, `reboot`):
		// Today's API refuses every action but forceDelete, naming it.
	default:
		t.Errorf("confirmed reboot: %d\n%.1500s", r.status, r.body)
	}
}
