package ui

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/safetext"
)

// refreshHeader marks the live pages' own polling requests.
const refreshHeader = "X-Ingot-Refresh"

// Layout is what every page's frame shows.
type Layout struct {
	Title   string
	Nav     string // the current section: fleet, servers, nodes
	User    string
	Project string
	Roles   string
	NoAuth  bool
	Nodes   bool // offer the nodes page (ingot:nodes:index)
	CSRF    string
	Refresh int // seconds between live refreshes; 0: none
	Flash   string
}

func (c *Console) layout(rc *reqCtx, title, nav string, live bool) Layout {
	l := Layout{Title: title, Nav: nav, User: rc.ident.UserName, Project: rc.ident.ProjectName,
		Roles: strings.Join(rc.ident.Roles, ", "), NoAuth: c.cfg.Keystone == nil, CSRF: rc.csrf,
		Nodes: rc.can(c.cfg.Policy, policy.NodesIndex, rc.ident.ProjectID, rc.ident.UserID),
		Flash: rc.r.URL.Query().Get("done")}
	if live {
		l.Refresh = int(c.cfg.RefreshInterval / time.Second)
		if l.Refresh < 1 {
			l.Refresh = 1
		}
	}
	return l
}

var pages = []string{"fleet", "servers", "server", "confirm", "nodes", "login", "error"}

func parseTemplates() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, p := range pages {
		t, err := template.New(p).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", p, err)
		}
		out[p] = t
	}
	return out, nil
}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"clock": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("15:04:05.000")
	},
	"dash": func(s string) string {
		if s == "" {
			return "—"
		}
		return s
	},
	"lower": strings.ToLower,
	"short": func(s string) string {
		if len(s) > 8 {
			return s[:8]
		}
		return s
	},
	"add1": func(i int) int { return i + 1 },
}

// render executes page into a buffer first, so a template error is a 500
// rather than half a page. html/template escapes markup but passes
// controls and bidi characters through; the templates hold none, so any
// in the page came from untrusted text (a name, a tag, a fault) and is
// made visible (\u202e, \x1b) so a U+202E cannot reorder what follows it.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, page string, data any) {
	var buf bytes.Buffer
	if err := c.tmpl[page].ExecuteTemplate(&buf, "layout", data); err != nil {
		c.log.Error("console: render", "page", page, "err", err)
		http.Error(w, "console: cannot render the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, safetext.Visible(buf.String()))
}

type errorPage struct {
	Layout
	Status  int
	Message string
}

// fail renders an error page with the API's (or the console's) message.
func (c *Console) fail(rc *reqCtx, status int, msg string) {
	if status == http.StatusUnauthorized && c.cfg.Keystone != nil {
		c.clearCookie(rc.w, rc.r, tokenCookie)
		c.toLogin(rc.w, rc.r, "Your session has ended; please log in again.")
		return
	}
	if status >= 500 {
		c.log.Error("console: page failed", "path", rc.r.URL.Path, "status", status, "err", msg)
	}
	p := &errorPage{Layout: c.layout(rc, http.StatusText(status), "", false), Status: status, Message: msg}
	c.render(rc.w, rc.r, status, "error", p)
}

// statusOf is the status an error is answered with: the API's own, else 500.
func statusOf(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	var ce *clientError
	if errors.As(err, &ce) {
		return ce.status
	}
	return http.StatusInternalServerError
}

// clientError is a bad console request (an unknown action, say).
type clientError struct {
	status int
	msg    string
}

func (e *clientError) Error() string { return e.msg }
