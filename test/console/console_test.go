package console

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ingot-dev/ingot/internal/poll"
)

// TestConsole: the console of `ingot serve` in noauth, in Chromium. Three
// servers are built through the API, one of them losing its first node to
// an out-of-band delete (the simulator's admin API) while it deploys; the
// fleet page counts them, the server page draws two attempts with the
// first ending node_deleted, the list pages and searches, the nodes page
// lists the inventory, and a delete from the console with its
// confirmation makes the server disappear from the list.
func TestConsole(t *testing.T) {
	b := newBrowser(t)
	shots := artifacts(t)
	s := startIngot(t, 5, 2500*time.Millisecond, "")

	web1, web2 := s.create("web-1"), s.create("web-2")
	victim := s.create("victim")
	var first string
	poll.Until(t, 20*time.Second, "victim deploying", func() (bool, string) {
		sv, _ := s.get(victim)
		first = sv.Node
		return sv.Phase == "deploying" && sv.Node != "", sv.Phase
	})
	if code := s.call("POST", s.simURL+"/_sim/nodes/"+first+"/delete", nil, nil); code != http.StatusNoContent {
		t.Fatalf("out-of-band delete of %s: %d", first, code)
	}
	for _, id := range []string{web1, web2} {
		s.waitStatus(id, "ACTIVE", 30*time.Second)
	}
	got := s.waitStatus(victim, "ACTIVE", 40*time.Second)
	if len(got.Attempts) != 1 || got.Attempts[0].Reason != "node_deleted" || got.Attempts[0].Node != first {
		t.Fatalf("victim's attempts %+v, want one node_deleted on %s", got.Attempts, first)
	}

	// The fleet.
	fleetBytes, fleetLoads := b.weigh(s.url + "/ui/")
	b.do(chromedp.WaitVisible(chromedp.CSS("#status-table")))
	count := func(status string) string {
		return strings.TrimSpace(b.text(`#status-table tr[data-status="` + status + `"] .count`))
	}
	if a, bu, e := count("ACTIVE"), count("BUILD"), count("ERROR"); a != "3" || bu != "0" || e != "0" {
		t.Errorf("fleet counts ACTIVE %s BUILD %s ERROR %s, want 3 0 0", a, bu, e)
	}
	if v := strings.TrimSpace(b.text("#past-deadline")); v != "0" {
		t.Errorf("past deadline %q, want 0", v)
	}
	if v := strings.TrimSpace(b.text("#ironic-state")); v != "reachable" {
		t.Errorf("ironic %q", v)
	}
	if v := b.text(`#faults-table tr[data-reason="node_deleted"]`); !strings.Contains(v, "victim") || !strings.Contains(v, first) {
		t.Errorf("recent faults row %q: want the victim's node_deleted on %s", v, first)
	}
	if v := strings.TrimSpace(b.text("#nodes-total")); v != "4" {
		t.Errorf("nodes total %q, want 4 (one deleted out-of-band)", v)
	}
	if v := strings.TrimSpace(b.text("#nodes-held")); v != "3" {
		t.Errorf("nodes held %q, want 3", v)
	}
	b.shot(shots, "fleet")

	// Live: a new server shows without a reload.
	marker := eval[string](b, `document.body.dataset.refreshed || ""`)
	s.create("late")
	b.waitJS(20*time.Second, "fleet refreshed with 4 servers",
		`document.querySelector("#fleet-total").textContent.trim() === "4"`)
	if eval[string](b, `document.body.dataset.refreshed || ""`) == marker {
		t.Errorf("the count changed without the live refresh running")
	}

	// The server page and its timeline.
	serverBytes, serverLoads := b.weigh(s.url + "/ui/servers/" + victim)
	b.do(chromedp.WaitVisible(chromedp.CSS("#timeline")))
	lanes := eval[[]map[string]string](b, `[...document.querySelectorAll("#timeline g.lane")].map(g => ({attempt: g.dataset.attempt, node: g.dataset.node, outcome: g.dataset.outcome, bars: String(g.querySelectorAll("rect.bar").length), errs: String(g.querySelectorAll("rect.bar.err").length)}))`)
	var attempts []map[string]string
	for _, l := range lanes {
		if l["attempt"] != "0" {
			attempts = append(attempts, l)
		}
	}
	if len(attempts) != 2 {
		t.Fatalf("timeline lanes %v: want two attempts", lanes)
	}
	if a := attempts[0]; a["attempt"] != "1" || a["node"] != first || a["outcome"] != "node_deleted" || a["errs"] == "0" {
		t.Errorf("first attempt lane %v: want node %s ending node_deleted with an error bar", a, first)
	}
	if a := attempts[1]; a["attempt"] != "2" || a["node"] == first || a["outcome"] != "" || a["errs"] != "0" {
		t.Errorf("second attempt lane %v: want another node, no failure", a)
	}
	if n := eval[int](b, `document.querySelectorAll("#timeline .mark.oob").length`); n < 1 {
		t.Errorf("no out-of-band marker on the timeline")
	}
	if n := eval[int](b, `document.querySelectorAll("#timeline .vline.deadline").length`); n != 1 {
		t.Errorf("%d deadline lines, want 1", n)
	}
	b.shot(shots, "server")
	t.Logf("page weights (cache off, bytes transferred incl. stylesheet and script): fleet %d B in %d loads, server %d B in %d loads",
		fleetBytes, fleetLoads, serverBytes, serverLoads)

	// Narrow screen: nothing wider than the viewport but the scrolling boxes.
	b.do(chromedp.EmulateViewport(390, 844))
	b.do(chromedp.Navigate(s.url + "/ui/servers/" + victim))
	b.do(chromedp.WaitVisible(chromedp.CSS("#timeline")))
	if w := eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 1 {
		t.Errorf("at 390 px the page is %d px wider than the screen", w)
	}
	b.shot(shots, "server-narrow")
	b.do(chromedp.EmulateViewport(1280, 800))

	// The list: search, filter, pages.
	b.do(chromedp.Navigate(s.url + "/ui/servers"))
	b.do(chromedp.WaitVisible(chromedp.CSS("#servers-table")))
	rows := func() []string {
		return eval[[]string](b, `[...document.querySelectorAll("#servers-table tbody tr[data-name]")].map(r => r.dataset.name)`)
	}
	if r := rows(); len(r) != 4 {
		t.Errorf("servers listed %v, want 4", r)
	}
	b.shot(shots, "servers")
	b.do(chromedp.SendKeys(chromedp.CSS("#q"), "web"), chromedp.Click(chromedp.CSS("#search")))
	b.waitJS(10*time.Second, "the search's page", `location.search.includes("q=web") && document.readyState === "complete"`)
	if r := rows(); len(r) != 2 || !strings.HasPrefix(r[0], "web-") || !strings.HasPrefix(r[1], "web-") {
		t.Errorf("search web: %v", r)
	}
	b.do(chromedp.Navigate(s.url + "/ui/servers?limit=3"))
	page1 := rows()
	b.do(chromedp.Click(chromedp.CSS("#next-page")))
	b.waitJS(10*time.Second, "the next page", `location.search.includes("marker=") && document.readyState === "complete"`)
	page2 := rows()
	if len(page1) != 3 || len(page2) != 1 || page2[0] == page1[2] {
		t.Errorf("pages %v then %v: want 3 then the 4th", page1, page2)
	}
	if eval[int](b, `document.querySelectorAll("#next-page").length`) != 0 {
		t.Errorf("the last page offers a next page")
	}

	// The nodes.
	b.do(chromedp.Navigate(s.url + "/ui/nodes"))
	b.do(chromedp.WaitVisible(chromedp.CSS("#nodes-table")))
	if n := eval[int](b, `document.querySelectorAll("#nodes-table tbody tr[data-uuid]").length`); n != 4 {
		t.Errorf("%d nodes listed, want 4", n)
	}
	b.do(chromedp.Navigate(s.url + "/ui/nodes?state=available"))
	if n := eval[int](b, `document.querySelectorAll('#nodes-table tbody tr[data-uuid]:not([data-state="available"])').length`); n != 0 {
		t.Errorf("the state filter kept %d other nodes", n)
	}
	b.do(chromedp.Navigate(s.url + "/ui/nodes"))
	b.shot(shots, "nodes")

	// Keyboard: the first Tab reaches the skip link, Enter moves to the content.
	b.do(chromedp.Navigate(s.url+"/ui/servers/"+victim), chromedp.WaitVisible(chromedp.CSS("#timeline")))
	b.do(chromedp.KeyEvent("\t"))
	if v := eval[string](b, `document.activeElement.className`); v != "skip" {
		t.Errorf("first Tab focused %q, want the skip link", v)
	}

	// Delete from the console, with its confirmation.
	b.do(chromedp.Click(chromedp.CSS("#action-delete")))
	b.waitJS(10*time.Second, "the confirmation page", `location.pathname.endsWith("/delete") && document.readyState === "complete"`)
	if !strings.HasSuffix(b.location(), "/ui/servers/"+victim+"/delete") {
		t.Fatalf("delete went to %s, want its confirmation page", b.location())
	}
	if _, code := s.get(victim); code != http.StatusOK {
		t.Fatalf("the confirmation page alone changed the server (%d)", code)
	}
	b.shot(shots, "confirm-delete")
	b.do(chromedp.Click(chromedp.CSS("#confirm-action")))
	b.waitJS(10*time.Second, "back on the list", `location.pathname === "/ui/servers" && document.readyState === "complete"`)
	if !strings.Contains(b.text(".flash"), "Deleting server victim") {
		t.Errorf("no flash after the delete")
	}
	poll.Until(t, 30*time.Second, "victim gone from the console's list", func() (bool, string) {
		b.do(chromedp.Navigate(s.url + "/ui/servers"))
		r := rows()
		return !contains(r, "victim"), fmt.Sprint(r)
	})
	if _, code := s.get(victim); code != http.StatusNotFound {
		t.Errorf("GET victim after the console's delete: %d, want 404", code)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
