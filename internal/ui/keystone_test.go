package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/keystonetest"
)

// login fills the login form as a browser would.
func (u *user) login(name, password, project string) page {
	u.e.t.Helper()
	form := u.get("/ui/login?next=%2Fui%2Fservers")
	if form.status != 200 {
		u.e.t.Fatalf("login form: %d", form.status)
	}
	return u.post("/ui/login", url.Values{"csrf": {csrfOf(u.e.t, form)}, "username": {name}, "password": {password},
		"project": {project}, "domain": {"Default"}, "next": {"/ui/servers"}}, "")
}

// TestKeystoneSessions: behind a real Keystone the console sends a
// visitor to its login form, logs in with Keystone's password auth into an
// HttpOnly, SameSite=Strict cookie, and shows each user what the API
// shows them: member-b sees nothing of project a's server (404, not in
// the list, its delete refused), nodes only to the admin; logging out
// revokes the token.
func TestKeystoneSessions(t *testing.T) {
	ks := keystonetest.Start(t)
	e := start(t, ks)
	idA := e.create(ks.Token(t, "member-a"), "server-a")

	anon := e.user()
	if p := anon.get("/ui/"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/ui/login?next=%2Fui%2F") {
		t.Fatalf("anonymous fleet: %d %s, want the login form", p.status, p.header.Get("Location"))
	}
	if p := anon.post("/ui/servers/"+idA+"/delete", url.Values{"confirm": {"yes"}}, ""); p.status != http.StatusUnauthorized {
		t.Errorf("anonymous delete: %d, want 401", p.status)
	}
	if p := anon.login("member-a", "wrong", "a"); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "Invalid user, password or project") {
		t.Errorf("wrong password: %d", p.status)
	}
	if p := anon.post("/ui/login", url.Values{"username": {"member-a"}, "password": {keystonetest.Password}, "project": {"a"}}, ""); p.status != http.StatusForbidden {
		t.Errorf("login without the form's token: %d, want 403", p.status)
	}

	a := e.user()
	p := a.login("member-a", keystonetest.Password, "a")
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/servers" {
		t.Fatalf("member-a login: %d %s\n%.1000s", p.status, p.header.Get("Location"), p.body)
	}
	var session string
	for _, ck := range p.header.Values("Set-Cookie") {
		if strings.HasPrefix(ck, "ingot_token=") {
			session = ck
		}
	}
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/ui/"} {
		if !strings.Contains(session, want) {
			t.Errorf("session cookie %q lacks %s", session, want)
		}
	}
	if r := rows(a.get("/ui/servers")); strings.Join(r, ",") != "server-a" {
		t.Errorf("member-a's list: %v", r)
	}
	if p := a.get("/ui/servers/" + idA); p.status != 200 || !strings.Contains(p.body, "server-a") {
		t.Errorf("member-a's server page: %d", p.status)
	}
	if p := a.get("/ui/nodes"); p.status != http.StatusForbidden || !strings.Contains(p.body, "ingot:nodes:index") {
		t.Errorf("member-a's nodes page: %d, want the API's 403", p.status)
	}
	if p := a.get("/ui/"); strings.Contains(p.body, `href="/ui/nodes"`) {
		t.Errorf("member-a is offered the nodes page")
	}

	b := e.user()
	if p := b.login("member-b", keystonetest.Password, "b"); p.status != http.StatusSeeOther {
		t.Fatalf("member-b login: %d", p.status)
	}
	if r := rows(b.get("/ui/servers")); len(r) != 0 {
		t.Errorf("member-b lists %v", r)
	}
	if p := b.get("/ui/servers/" + idA); p.status != http.StatusNotFound || strings.Contains(p.body, "server-a") {
		t.Errorf("member-b on server-a's page: %d", p.status)
	}
	if p := b.get("/ui/servers/" + idA + "/delete"); p.status != http.StatusNotFound {
		t.Errorf("member-b on server-a's delete confirmation: %d", p.status)
	}
	bToken := csrfOf(t, b.get("/ui/servers"))
	if p := b.post("/ui/servers/"+idA+"/delete", url.Values{"csrf": {bToken}, "confirm": {"yes"}}, ""); p.status != http.StatusNotFound {
		t.Errorf("member-b's delete of server-a: %d, want the API's 404", p.status)
	}
	if p := b.get("/ui/"); strings.Contains(p.body, "server-a") || strings.Contains(p.body, idA) {
		t.Errorf("member-b's fleet shows server-a")
	}
	e.waitStatus(ks.Token(t, "member-a"), idA, "ACTIVE")

	admin := e.user()
	if p := admin.login("admin", keystonetest.Password, "admin"); p.status != http.StatusSeeOther {
		t.Fatalf("admin login: %d", p.status)
	}
	if r := rows(admin.get("/ui/servers")); strings.Join(r, ",") != "server-a" {
		t.Errorf("admin's list (every project): %v", r)
	}
	if p := admin.get("/ui/nodes"); p.status != 200 || strings.Count(p.body, "<tr data-uuid=") != 4 {
		t.Errorf("admin's nodes page: %d", p.status)
	}

	// Logging out revokes the token: the old cookie no longer works.
	old := a.hc.Jar.Cookies(mustURL(t, e.url+"/ui/"))
	if p := a.post("/ui/logout", url.Values{"csrf": {csrfOf(t, a.get("/ui/servers"))}}, ""); p.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", p.status)
	}
	replay := e.user()
	replay.hc.Jar.SetCookies(mustURL(t, e.url+"/ui/"), old)
	if p := replay.get("/ui/servers"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/ui/login") {
		t.Errorf("the logged-out token still opens the console: %d", p.status)
	}
}

// consoleRoutes says, for every console route, how TestKeystoneSessions
// checks that another project's member gets nothing from it. A new route
// without a row fails TestConsoleRoutesCovered.
var consoleRoutes = map[string]string{
	"GET /ui/static/{file}":          "public: the stylesheet and the script",
	"GET /ui":                        "redirect to /ui/",
	"GET /ui/{$}":                    "member-b's fleet shows nothing of project a",
	"GET /ui/servers":                "member-b's list is empty",
	"GET /ui/servers/{id}":           "member-b gets the API's 404",
	"GET /ui/servers/{id}/{action}":  "member-b gets the API's 404 on the confirmation",
	"POST /ui/servers/{id}/{action}": "member-b's delete gets the API's 404",
	"GET /ui/nodes":                  "member-a gets the API's 403",
	"POST /ui/logout":                "revokes the caller's own token",
	"GET /ui/login":                  "public: the form",
	"POST /ui/login":                 "Keystone decides; a bad password is 401",
}

func TestConsoleRoutesCovered(t *testing.T) {
	e := start(t, nil)
	for _, r := range e.app.Console.Routes() {
		if _, ok := consoleRoutes[r]; !ok {
			t.Errorf("console route %q has no row in consoleRoutes: say how another project is kept out", r)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
