package api_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"
)

func TestListPaging(t *testing.T) {
	f := newFixture(t)
	var ids []string
	for i := range 5 {
		f.clock.Advance(1e9)
		ids = append(ids, f.create("vm"+string(rune('a'+i))))
	}
	var got []string
	path := "/v2.1/servers/detail?limit=2"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		r := f.do("GET", path, "2.90", nil).want(t, 200)
		for _, s := range list(t, r.body, "servers") {
			got = append(got, s.(map[string]any)["id"].(string))
		}
		path = ""
		if links, ok := r.body["servers_links"].([]any); ok {
			href := links[0].(map[string]any)["href"].(string)
			if !strings.HasPrefix(href, f.url+"/v2.1/servers/detail?") || !strings.Contains(href, "limit=2") {
				t.Fatalf("next link %q", href)
			}
			path = strings.TrimPrefix(href, f.url)
		}
	}
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Fatalf("paged %v, want %v", got, ids)
	}
	// OSC's --limit -1 walks with a bare marker until an empty page.
	r := f.do("GET", "/v2.1/servers/detail?marker="+ids[4], "2.90", nil).want(t, 200)
	if l := list(t, r.body, "servers"); len(l) != 0 || r.body["servers_links"] != nil {
		t.Fatalf("after the last marker: %s", r.raw)
	}
	f.do("GET", "/v2.1/servers/detail?marker="+unknownID, "2.90", nil).novaError(t, 400, "badRequest")
	f.do("GET", "/v2.1/servers/detail?marker=vm1", "2.90", nil).novaError(t, 400, "badRequest")
	f.do("GET", "/v2.1/servers?limit=-1", "2.90", nil).novaError(t, 400, "badRequest")
	f.do("GET", "/v2.1/servers?limit=x", "2.90", nil).novaError(t, 400, "badRequest")
	f.do("GET", "/v2.1/servers/detail?status=BOGUS", "2.90", nil).novaError(t, 400, "badRequest")
	if l := list(t, f.do("GET", "/v2.1/servers/detail?status=BOGUS", "2.1", nil).want(t, 200).body, "servers"); len(l) != 0 {
		t.Errorf("unknown status below 2.38 listed %d", len(l))
	}
	if l := list(t, f.do("GET", "/v2.1/servers/detail?status=SHUTOFF", "2.90", nil).want(t, 200).body, "servers"); len(l) != 0 {
		t.Errorf("SHUTOFF listed %d", len(l))
	}
	if l := list(t, f.do("GET", "/v2.1/servers/detail?status=build", "2.90", nil).want(t, 200).body, "servers"); len(l) != 5 {
		t.Errorf("status=build listed %d", len(l))
	}
	if l := list(t, f.do("GET", "/v2.1/servers?limit=0", "2.90", nil).want(t, 200).body, "servers"); len(l) != 0 {
		t.Errorf("limit=0 listed %d", len(l))
	}
}

func TestListImageFlavorFilters(t *testing.T) {
	f := newFixture(t)
	var large []string
	for i := range 6 {
		body := validCreate()
		srv := body["server"].(map[string]any)
		srv["name"] = "vm" + string(rune('a'+i))
		if i%2 == 1 {
			srv["flavorRef"], srv["imageRef"] = "2", image2ID
		}
		f.clock.Advance(1e9)
		r := f.do("POST", "/v2.1/servers", "2.90", body).want(t, http.StatusAccepted)
		if i%2 == 1 {
			large = append(large, obj(t, r.body, "server")["id"].(string))
		}
	}
	for _, q := range []string{"flavor=2", "flavor=bm.large", "image=" + image2ID, "image=ubuntu-24.04&flavor=2"} {
		var got []string
		path := "/v2.1/servers/detail?limit=2&" + q
		for path != "" {
			r := f.do("GET", path, "2.90", nil).want(t, 200)
			for _, s := range list(t, r.body, "servers") {
				got = append(got, s.(map[string]any)["id"].(string))
			}
			path = ""
			if links, ok := r.body["servers_links"].([]any); ok {
				path = strings.TrimPrefix(links[0].(map[string]any)["href"].(string), f.url)
			}
		}
		if strings.Join(got, ",") != strings.Join(large, ",") {
			t.Errorf("%s: %v, want %v", q, got, large)
		}
	}
	if l := list(t, f.do("GET", "/v2.1/servers?flavor=1&image="+image2ID, "2.90", nil).want(t, 200).body, "servers"); len(l) != 0 {
		t.Errorf("contradictory filters listed %d", len(l))
	}
}

// TestNameFilterIsARegex: Nova's name filter is a regular expression
// searched in the name; a plain name stays a substring search.
func TestNameFilterIsARegex(t *testing.T) {
	f := newFixture(t)
	for _, n := range []string{"web-1", "web-2", "db-1", "xweb", "a.b"} {
		f.create(n)
	}
	names := func(path string) string {
		t.Helper()
		var out []string
		for _, s := range list(t, f.do("GET", path, "2.90", nil).want(t, 200).body, "servers") {
			out = append(out, s.(map[string]any)["name"].(string))
		}
		sort.Strings(out) // servers created at one instant list in id order
		return strings.Join(out, ",")
	}
	for q, want := range map[string]string{
		"web":                     "web-1,web-2,xweb",
		"%5Eweb-":                 "web-1,web-2", // ^web-
		"1%24":                    "db-1,web-1",  // 1$
		"web-%5B2-9%5D":           "web-2",       // web-[2-9]
		"%5E(db%7Cxweb)":          "db-1,xweb",   // ^(db|xweb)
		"a.b":                     "a.b",
		"WEB":                     "",
		"%5Eweb-2&limit=1":        "web-2",
		"%5Eweb&flavor=2":         "",
		"%5Eweb&image=" + imageID: "web-1,web-2",
	} {
		for _, path := range []string{"/v2.1/servers?name=", "/v2.1/servers/detail?name="} {
			if got := names(path + q); got != want {
				t.Errorf("%s%s: %q, want %q", path, q, got, want)
			}
		}
	}
	if got := names("/v2.1/servers?name=%5Eweb&limit=1"); got != "web-1" && got != "web-2" {
		t.Errorf("^web with limit 1: %q", got)
	}
	f.do("GET", "/v2.1/servers?name=(a", "2.90", nil).novaError(t, 400, "badRequest")
}
