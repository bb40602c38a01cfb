// Package ui is ingot's operator console: server-rendered pages under /ui/
// (the fleet, the servers with each one's timeline, the nodes) served by the
// ingot binary itself, with its templates, stylesheet and script embedded.
//
// What a user sees is what the API allows them: every page gets its data by
// calling the API handler in-process with the user's own credentials (the
// Keystone token from the session cookie, or nothing in noauth), so every
// policy check, project scope and 404 is the API's own. The two fleet
// figures the API has no route for — servers counted by status and the
// servers with recent faults — come from the store, scoped to what the API
// answers the same user for a listing (their project, or every project
// when the API lets them list all_tenants), and each fault shown is read
// back through the API.
//
// Pages:
//
//	GET  /ui/                         the fleet (refreshed live)
//	GET  /ui/servers                  search, status filter, paged by marker
//	GET  /ui/servers/{id}             fields, addresses, volumes, fault, timeline, actions
//	GET  /ui/servers/{id}/{action}    confirmation (delete, reboot, reboot-hard, stop, start)
//	POST /ui/servers/{id}/{action}    the API's DELETE or server action
//	GET  /ui/nodes                    Ironic's nodes (as GET /ingot/v1/nodes: admins)
//	GET|POST /ui/login  POST /ui/logout   Keystone only
//	GET  /ui/static/{file}            the stylesheet and the script
//
// Every POST carries the session's CSRF token and an Origin (or Referer) of
// this server; see session.go.
package ui

import (
	"context"
	"crypto/rand"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/auth"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/hostcheck"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config is what the console needs. API, Auth and Store are required.
type Config struct {
	// API is the compute API's handler (internal/api), called in-process.
	API http.Handler
	// Auth is the API's authenticator: the console resolves the same
	// identity the API will (and shares its token cache).
	Auth auth.Authenticator
	// Policy is the API's enforcer, used only to decide which links and
	// buttons to offer; the API decides every read and action itself.
	Policy *policy.Enforcer
	// Store answers the fleet's counts and its recent-fault index.
	Store store.Store
	// Keystone, when set, is where the login form obtains tokens; nil
	// means noauth: no login, every page is the noauth identity.
	Keystone *KeystoneLogin
	// PastDeadline is the reconciler's last count of servers past their
	// deadline (ingot_servers_past_deadline). May be nil.
	PastDeadline func() int
	// Ready reports whether Ironic (and the database) answer. May be nil.
	Ready func(ctx context.Context) error
	// Lifecycle gives the delete deadline drawn on a timeline.
	Lifecycle lifecycle.Config
	// PublicURL is the API's public root (scheme://host[:port]); an https
	// one makes the cookies Secure, and its host is accepted in Origin.
	PublicURL string
	// Hosts are the names a request's Host may carry, the API's own list
	// (nil: addresses, localhost and PublicURL's host).
	Hosts *hostcheck.Allowlist
	// RefreshInterval is how often live pages poll (default 5 s).
	RefreshInterval time.Duration
	Clock           clock.Clock
	Logger          *slog.Logger
}

// KeystoneLogin is where and how the login form authenticates.
type KeystoneLogin struct {
	AuthURL string // Keystone v3, e.g. http://127.0.0.1:5000/v3
	// Domain is the default user and project domain (default "Default").
	Domain  string
	Timeout time.Duration // per Keystone call (default 10 s)
}

// Console is the /ui/ handler.
type Console struct {
	cfg    Config
	log    *slog.Logger
	mux    *http.ServeMux
	tmpl   map[string]*template.Template
	key    []byte // HMAC key of the CSRF tokens, new at every start
	routes []string
}

// New builds the console.
func New(cfg Config) (*Console, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Hosts == nil {
		cfg.Hosts = hostcheck.New(nil, cfg.PublicURL)
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = 5 * time.Second
	}
	if cfg.Policy == nil {
		p, err := policy.New(nil)
		if err != nil {
			return nil, err
		}
		cfg.Policy = p
	}
	if k := cfg.Keystone; k != nil {
		if k.Domain == "" {
			k.Domain = "Default"
		}
		if k.Timeout <= 0 {
			k.Timeout = 10 * time.Second
		}
	}
	c := &Console{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux(), key: make([]byte, 32)}
	if _, err := rand.Read(c.key); err != nil {
		return nil, err
	}
	tm, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	c.tmpl = tm
	c.register()
	return c, nil
}

func (c *Console) register() {
	static, _ := fs.Sub(staticFS, "static")
	files := http.FileServerFS(static)
	c.handle("GET /ui/static/{file}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		http.StripPrefix("/ui/static/", files).ServeHTTP(w, r)
	})
	c.handle("GET /ui", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/", http.StatusFound) })
	c.page("GET /ui/{$}", c.fleet)
	c.page("GET /ui/servers", c.servers)
	c.page("GET /ui/servers/{id}", c.server)
	c.page("GET /ui/servers/{id}/{action}", c.confirm)
	c.page("POST /ui/servers/{id}/{action}", c.act)
	c.page("GET /ui/nodes", c.nodes)
	c.page("POST /ui/logout", c.logout)
	c.handle("GET /ui/login", c.loginForm)
	c.handle("POST /ui/login", c.login)
}

func (c *Console) handle(pattern string, h http.HandlerFunc) {
	c.mux.Handle(pattern, h)
	c.routes = append(c.routes, pattern)
}

// Routes lists every registered pattern, for tests that walk them.
func (c *Console) Routes() []string { return append([]string(nil), c.routes...) }

// ServeHTTP answers /ui/ requests with the headers every page carries.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Nothing of another origin: no framing, no inline script, no fonts or
	// CDNs (the pages use only their own stylesheet and script).
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	// A Host of another name is a DNS-rebinding page (its own name
	// pointed at this server), which would be same-origin with the console.
	if !c.cfg.Hosts.Allowed(r) {
		http.Error(w, "console: unexpected Host", http.StatusMisdirectedRequest)
		return
	}
	c.mux.ServeHTTP(w, r)
}

// secure reports whether cookies must be Secure: the request came over
// TLS, or the public URL is https (a TLS-terminating proxy in front).
func (c *Console) secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(c.cfg.PublicURL, "https://")
}
