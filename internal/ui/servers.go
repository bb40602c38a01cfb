package ui

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/policy"
)

const (
	defaultPage = 25
	maxUIPage   = 200
)

// listStatuses are the status filter's choices: what ingot's servers show.
var listStatuses = []string{"BUILD", "ACTIVE", "ERROR", "SHUTOFF", "REBOOT", "HARD_REBOOT", "REBUILD", "RESCUE", "DELETED"}

type serversPage struct {
	Layout
	Query, Status string
	Statuses      []string
	Limit         int
	Servers       []apiServer
	AllProjects   bool
	ShowNode      bool
	Next, First   string // links ("" when none)
	Paged         bool
}

// servers is the table: one page of the API's /servers/detail, with the
// search (a literal name substring), the status filter and the marker
// carried over.
func (c *Console) servers(rc *reqCtx) error {
	q := rc.r.URL.Query()
	p := &serversPage{Layout: c.layout(rc, "Servers", "servers", true), Query: strings.TrimSpace(q.Get("q")),
		Status: strings.ToUpper(q.Get("status")), Statuses: listStatuses, Limit: defaultPage}
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 0 {
		p.Limit = min(n, maxUIPage)
	}
	api := url.Values{"limit": {strconv.Itoa(p.Limit)}}
	if p.Query != "" {
		// The API's name filter is a regular expression: the search box
		// means the text itself.
		api.Set("name", regexp.QuoteMeta(p.Query))
	}
	if p.Status != "" {
		api.Set("status", p.Status)
	}
	marker := q.Get("marker")
	if marker != "" {
		api.Set("marker", marker)
		p.Paged = true
	}
	if p.AllProjects = rc.allProjects(); p.AllProjects {
		api.Set("all_tenants", "1")
	}
	var list serverList
	if err := rc.api.get("/v2.1/servers/detail?"+api.Encode(), &list); err != nil {
		return err
	}
	p.Servers = list.Servers
	for _, s := range p.Servers {
		if s.Node != nil {
			p.ShowNode = true
		}
	}
	keep := url.Values{}
	if p.Query != "" {
		keep.Set("q", p.Query)
	}
	if p.Status != "" {
		keep.Set("status", p.Status)
	}
	if p.Limit != defaultPage {
		keep.Set("limit", strconv.Itoa(p.Limit))
	}
	if m := list.nextMarker(); m != "" {
		next := url.Values{}
		for k, v := range keep {
			next[k] = v
		}
		next.Set("marker", m)
		p.Next = "/ui/servers?" + next.Encode()
	}
	if p.Paged {
		p.First = "/ui/servers?" + keep.Encode()
	}
	c.render(rc.w, rc.r, http.StatusOK, "servers", p)
	return nil
}

type action struct {
	Name    string // the path element: delete, reboot, …
	Label   string
	Verb    string // what the confirmation asks
	Danger  bool
	method  string
	path    string // relative to /v2.1/servers/{id}
	body    any
	rule    string
	allowed func(s *apiServer) bool
}

// notDeleting: no delete was accepted (Nova shows the status the server
// had, with task_state deleting, until it is gone).
func notDeleting(s *apiServer) bool { return s.Status != "DELETED" && s.Task() != "deleting" }
func isActive(s *apiServer) bool    { return s.Status == "ACTIVE" && s.Task() == "" }

// actions are what the console offers, each mapped to the API's own
// endpoint. The power actions appear once the API's policy has their
// rules (Nova's names); the API decides every one of them anyway.
var actions = []action{
	{Name: "reboot", Label: "Reboot", Verb: "reboot (soft)", method: http.MethodPost, path: "/action",
		body: map[string]any{"reboot": map[string]string{"type": "SOFT"}}, rule: "os_compute_api:servers:reboot", allowed: isActive},
	{Name: "reboot-hard", Label: "Hard reboot", Verb: "reboot (hard)", method: http.MethodPost, path: "/action",
		body: map[string]any{"reboot": map[string]string{"type": "HARD"}}, rule: "os_compute_api:servers:reboot",
		allowed: func(s *apiServer) bool {
			return notDeleting(s) && (s.Status == "ACTIVE" || s.Status == "SHUTOFF" || s.Status == "REBOOT")
		}},
	{Name: "stop", Label: "Stop", Verb: "stop (power off)", method: http.MethodPost, path: "/action",
		body: map[string]any{"os-stop": nil}, rule: "os_compute_api:servers:stop", allowed: isActive},
	{Name: "start", Label: "Start", Verb: "start (power on)", method: http.MethodPost, path: "/action",
		body: map[string]any{"os-start": nil}, rule: "os_compute_api:servers:start",
		allowed: func(s *apiServer) bool { return s.Status == "SHUTOFF" && s.Task() == "" }},
	{Name: "delete", Label: "Delete", Verb: "delete", Danger: true, method: http.MethodDelete,
		rule: policy.ServersDelete, allowed: notDeleting},
}

func findAction(name string) (action, bool) {
	for _, a := range actions {
		if a.Name == name {
			return a, true
		}
	}
	return action{}, false
}

// offered lists the actions to show for s: the policy has the rule and
// lets the user, and the server's state allows it.
func (c *Console) offered(rc *reqCtx, s *apiServer) []action {
	var out []action
	for _, a := range actions {
		if !c.cfg.Policy.Has(a.rule) || !rc.can(c.cfg.Policy, a.rule, s.TenantID, s.UserID) || !a.allowed(s) {
			continue
		}
		out = append(out, a)
	}
	return out
}

type confirmPage struct {
	Layout
	Server apiServer
	Action action
}

// confirm asks before an action (no script needed: the confirmation is a
// page with the form, Cancel goes back).
func (c *Console) confirm(rc *reqCtx) error {
	a, ok := findAction(rc.r.PathValue("action"))
	if !ok {
		return &clientError{status: http.StatusNotFound, msg: "No such action."}
	}
	s, err := c.getServer(rc, rc.r.PathValue("id"))
	if err != nil {
		return err
	}
	c.render(rc.w, rc.r, http.StatusOK, "confirm", &confirmPage{Layout: c.layout(rc, a.Label+" "+s.Name, "servers", false), Server: *s, Action: a})
	return nil
}

// act sends the confirmed action to the API and goes back: to the list
// after a delete, to the server otherwise.
func (c *Console) act(rc *reqCtx) error {
	a, ok := findAction(rc.r.PathValue("action"))
	if !ok {
		return &clientError{status: http.StatusNotFound, msg: "No such action."}
	}
	id := rc.r.PathValue("id")
	if !uuidRE.MatchString(id) {
		return &clientError{status: http.StatusNotFound, msg: "Instance " + id + " could not be found."}
	}
	if rc.r.PostFormValue("confirm") != "yes" {
		return &clientError{status: http.StatusBadRequest, msg: "The action was not confirmed."}
	}
	if err := rc.api.do(a.method, "/v2.1/servers/"+id+a.path, a.body, nil); err != nil {
		return err
	}
	name := rc.r.PostFormValue("name")
	if a.Name == "delete" {
		http.Redirect(rc.w, rc.r, "/ui/servers?done="+url.QueryEscape("Deleting server "+name+"."), http.StatusSeeOther)
		return nil
	}
	http.Redirect(rc.w, rc.r, "/ui/servers/"+id+"?done="+url.QueryEscape(a.Label+" of "+name+" requested."), http.StatusSeeOther)
	return nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// getServer is GET /v2.1/servers/{id} as the user.
func (c *Console) getServer(rc *reqCtx, id string) (*apiServer, error) {
	if !uuidRE.MatchString(id) {
		return nil, &clientError{status: http.StatusNotFound, msg: "Instance " + id + " could not be found."}
	}
	var body struct {
		Server apiServer `json:"server"`
	}
	if err := rc.api.get("/v2.1/servers/"+id, &body); err != nil {
		return nil, err
	}
	return &body.Server, nil
}

type serverPage struct {
	Layout
	Server   apiServer
	Deleted  bool // the API answers 404 for the server but still shows its actions
	ID       string
	Actions  []action
	Events   []eventRow
	Timeline *timeline
	Deadline time.Time
	Created  time.Time
}

type eventRow struct {
	Action, Event, Node, Result, Details string
	Start, Finish                        time.Time
}

// server is one server's page. A deleted server (404) still has its
// story: the API serves its instance actions, and the page shows them.
func (c *Console) server(rc *reqCtx) error {
	id := rc.r.PathValue("id")
	p := &serverPage{ID: id}
	s, err := c.getServer(rc, id)
	var ae *apiError
	switch {
	case err == nil:
		p.Server = *s
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		p.Deleted = true
	default:
		return err
	}
	var acts struct {
		Actions []apiAction `json:"instanceActions"`
	}
	if err := rc.api.get("/v2.1/servers/"+id+"/os-instance-actions", &acts); err != nil {
		if p.Deleted {
			return err // nothing of it is this user's to see
		}
		return err
	}
	var full []apiAction
	for i := len(acts.Actions) - 1; i >= 0; i-- { // the API lists newest first
		var one struct {
			Action apiAction `json:"instanceAction"`
		}
		if err := rc.api.get("/v2.1/servers/"+id+"/os-instance-actions/"+url.PathEscape(acts.Actions[i].RequestID), &one); err != nil {
			return err
		}
		full = append(full, one.Action)
	}
	title := p.Server.Name
	if p.Deleted {
		title = "Deleted server " + id
	}
	p.Layout = c.layout(rc, title, "servers", true)
	if !p.Deleted {
		p.Actions = c.offered(rc, &p.Server)
		p.Created = apiTime(p.Server.Created)
	}
	// The build deadline is not in Nova's body; the server's record has it,
	// read only once the API has shown this user the server.
	var deleteDeadline time.Time
	if !p.Deleted {
		if rec, err := c.cfg.Store.GetServer(rc.r.Context(), id); err == nil {
			p.Deadline = rec.Deadline
			if !rec.DeleteRequestedAt.IsZero() {
				deleteDeadline = rec.DeleteRequestedAt.Add(c.cfg.Lifecycle.DeleteTimeout)
			}
		}
	}
	p.Events = eventRows(full)
	p.Timeline = buildTimeline(timelineInput{
		Created: p.Created, Actions: full, Attempts: p.Server.Attempts, Deadline: p.Deadline,
		DeleteDeadline: deleteDeadline, Now: c.cfg.Clock.Now().UTC(), Live: !p.Deleted && (!notDeleting(&p.Server) || p.Server.Status != "ERROR" && (p.Server.Status == "BUILD" || p.Server.Task() != "")),
	})
	c.render(rc.w, rc.r, http.StatusOK, "server", p)
	return nil
}

func eventRows(acts []apiAction) []eventRow {
	var out []eventRow
	for _, a := range acts {
		for _, e := range a.Events {
			node := str(e.Host)
			if node == "" && e.HostID != "" {
				node = "host " + e.HostID[:min(8, len(e.HostID))]
			}
			out = append(out, eventRow{Action: a.Action, Event: e.Event, Node: node, Result: str(e.Result),
				Details: str(e.Details), Start: apiTime(str(e.StartTime)), Finish: apiTime(str(e.FinishTime))})
		}
	}
	return out
}
