package console

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/ingot-dev/ingot/internal/keystonetest"
)

// TestConsoleKeystone: behind a real Keystone, Chromium is sent to the
// login form, logs in as project a's member and sees its server; the
// session cookie is HttpOnly and SameSite=Strict; a member of project b,
// in another browser, sees neither the server in the list nor its page.
func TestConsoleKeystone(t *testing.T) {
	b := newBrowser(t)
	shots := artifacts(t)
	ks := keystonetest.Start(t)
	s := startIngot(t, 3, 300*time.Millisecond, fmt.Sprintf(`auth:
  strategy: keystone
  keystone: {auth_url: %q, username: ingot, password: %q, project_name: service}
`, ks.URL, keystonetest.Password))
	s.token = ks.Token(t, "member-a")
	id := s.create("server-a")
	s.waitStatus(id, "ACTIVE", 30*time.Second)

	b.do(chromedp.Navigate(s.url + "/ui/"))
	b.waitJS(10*time.Second, "the login form", `location.pathname === "/ui/login" && !!document.querySelector("#username")`)
	b.shot(shots, "login")
	login := func(b *browser, user, project string) {
		b.do(chromedp.SendKeys(chromedp.CSS("#username"), user),
			chromedp.SendKeys(chromedp.CSS("#password"), keystonetest.Password),
			chromedp.SendKeys(chromedp.CSS("#project"), project),
			chromedp.Click(chromedp.CSS("#login-submit")))
		b.waitJS(15*time.Second, user+" logged in", `location.pathname === "/ui/" && !!document.querySelector("#whoami")`)
	}
	login(b, "member-a", "a")
	if who := b.text("#whoami"); !strings.Contains(who, "member-a") || !strings.Contains(who, "project a") {
		t.Errorf("logged in as %q", who)
	}
	if v := strings.TrimSpace(b.text(`#status-table tr[data-status="ACTIVE"] .count`)); v != "1" {
		t.Errorf("member-a's fleet: %s ACTIVE, want 1", v)
	}
	cookies, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{s.url + "/ui/"}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range cookies.Cookies {
		if c.Name == "ingot_token" {
			found = true
			if !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict {
				t.Errorf("session cookie HttpOnly=%v SameSite=%v", c.HTTPOnly, c.SameSite)
			}
		}
	}
	if !found {
		t.Errorf("no session cookie after the login")
	}
	if eval[string](b, `document.cookie`) != "" {
		t.Errorf("a script can read the session cookie")
	}
	b.do(chromedp.Navigate(s.url + "/ui/servers"))
	if r := eval[[]string](b, `[...document.querySelectorAll("#servers-table tbody tr[data-name]")].map(r => r.dataset.name)`); strings.Join(r, ",") != "server-a" {
		t.Errorf("member-a lists %v", r)
	}
	b.shot(shots, "servers-member-a")

	other := newBrowser(t)
	other.do(chromedp.Navigate(s.url + "/ui/"))
	other.waitJS(10*time.Second, "the login form", `!!document.querySelector("#username")`)
	login(other, "member-b", "b")
	other.do(chromedp.Navigate(s.url + "/ui/servers"))
	if n := eval[int](other, `document.querySelectorAll("#servers-table tbody tr[data-name]").length`); n != 0 {
		t.Errorf("member-b lists %d servers", n)
	}
	resp, err := chromedp.Run(other.ctx, chromedp.NavigateResponse(s.url+"/ui/servers/"+id))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusNotFound || strings.Contains(other.text("main"), "server-a") {
		t.Errorf("member-b on server-a's page: %d", resp.Status)
	}
	other.shot(shots, "server-a-as-member-b")
	if n := eval[int](other, `document.querySelectorAll('a[href="/ui/nodes"]').length`); n != 0 {
		t.Errorf("member-b is offered the nodes page")
	}
}
