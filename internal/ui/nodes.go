package ui

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

const nodesPerPage = 100

type nodesPage struct {
	Layout
	Nodes        []apiNode
	States       []countRow
	State        string
	Maintenance  string // "", "yes", "no"
	Total, Shown int
	Page, Pages  int
	Prev, Next   string
}

// nodes is GET /ingot/v1/nodes as the user (admins by default policy),
// filtered by provision state and maintenance, a page at a time.
func (c *Console) nodes(rc *reqCtx) error {
	var body struct {
		Nodes []apiNode `json:"nodes"`
	}
	if err := rc.api.get("/ingot/v1/nodes", &body); err != nil {
		return err
	}
	q := rc.r.URL.Query()
	p := &nodesPage{Layout: c.layout(rc, "Nodes", "nodes", true), State: q.Get("state"), Maintenance: q.Get("maintenance"),
		Total: len(body.Nodes)}
	states := map[string]int{}
	var shown []apiNode
	for _, n := range body.Nodes {
		states[n.ProvisionState]++
		if p.State != "" && n.ProvisionState != p.State {
			continue
		}
		if (p.Maintenance == "yes" && !n.Maintenance) || (p.Maintenance == "no" && n.Maintenance) {
			continue
		}
		shown = append(shown, n)
	}
	p.States = sortedCounts(states)
	sort.Slice(p.States, func(i, j int) bool { return p.States[i].Name < p.States[j].Name })
	sort.SliceStable(shown, func(i, j int) bool { return nodeLabel(shown[i]) < nodeLabel(shown[j]) })
	p.Shown = len(shown)
	p.Pages = max(1, (len(shown)+nodesPerPage-1)/nodesPerPage)
	p.Page, _ = strconv.Atoi(q.Get("page"))
	p.Page = min(max(p.Page, 1), p.Pages)
	lo, hi := (p.Page-1)*nodesPerPage, min(p.Page*nodesPerPage, len(shown))
	p.Nodes = shown[lo:hi]
	link := func(page int) string {
		v := url.Values{}
		if p.State != "" {
			v.Set("state", p.State)
		}
		if p.Maintenance != "" {
			v.Set("maintenance", p.Maintenance)
		}
		v.Set("page", strconv.Itoa(page))
		return "/ui/nodes?" + v.Encode()
	}
	if p.Page > 1 {
		p.Prev = link(p.Page - 1)
	}
	if p.Page < p.Pages {
		p.Next = link(p.Page + 1)
	}
	c.render(rc.w, rc.r, http.StatusOK, "nodes", p)
	return nil
}

func nodeLabel(n apiNode) string {
	if n.Name != "" {
		return strings.ToLower(n.Name)
	}
	return n.UUID
}
