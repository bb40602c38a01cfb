// Package api serves ingot's Nova-compatible compute API (a faithful subset
// of the OpenStack Compute API v2.1), the Glance- and Neutron-shaped look-ups
// the OpenStack CLI makes on the same endpoint, health and metrics, and the
// ingot node listing. It only writes desired state and answers: no handler
// performs a build step, and every 2xx is sent after the store committed.
//
// Endpoints (microversions 2.1–2.92 on the compute routes; see
// docs/clients.md for why each exists):
//
//	GET  /  /v2.1  /v2.1/  /v2  /v2/                version documents (no auth)
//	POST /v2.1/servers                             create → 202
//	GET  /v2.1/servers[/detail]                    name, status, image, flavor, limit, marker
//	GET  /v2.1/servers/{id}                        404 for names, unknown and deleted ids
//	PUT|DELETE /v2.1/servers/{id}                  update (update.go) / → 204
//	POST /v2.1/servers/{id}/action                 reboot os-stop os-start rebuild rescue unrescue lock unlock forceDelete (day2.go, rebuild.go)
//	GET  /v2.1/servers/{id}/os-instance-actions[/{request_id}]   also for deleted servers
//	GET  /v2.1/flavors[/detail]  /v2.1/flavors/{id or name}[/os-extra_specs[/{key}]]
//	GET  /v2.1/images[/{id}]  /image/  /image/v2/images[/{id}]                 Glance shapes
//	GET  /v2.1[/v2.0]/networks[/{id}]  /v2.1[/v2.0]/ports/{id}  /network/  /network/v2.0/…  Neutron shapes
//	GET  /v2.1/os-networks[/{id}]                  Nova's network proxy, up to 2.35 (osnetworks.go)
//	GET|DELETE /v2.1/servers/{id}/os-server-password   always "" (no metadata service; serverpassword.go)
//	GET  /v2.1/servers/{id}/{metadata,ips,os-interface,tags,os-volume_attachments,os-security-groups}
//	POST|PUT …/metadata  GET|PUT|DELETE …/metadata/{key}  PUT|DELETE …/tags  GET|PUT|DELETE …/tags/{tag}   update.go, tags.go
//	GET  /v2.1/os-availability-zone[/detail]  …/ports?device_id=|id=|name=    read-only extras
//	GET  /volume/  POST|GET /volume/v3/{project}/volumes[/detail]  GET|DELETE …/volumes/{id}   Cinder shapes (volumes.go)
//	GET|POST /v2.1/os-keypairs  GET|DELETE /v2.1/os-keypairs/{name}     keypairs.go
//	GET|PUT|DELETE /v2.1/os-quota-sets/{project}[/detail|/defaults]  GET /v2.1/limits   quotas.go
//	GET  /v2.1/extensions[/{alias}]  /v2.1/servers/{id}/ips/{network}  /v2.1/os-migrations   extensions.go, conformance.go
//	GET  /v2.1/os-simple-tenant-usage[/{project}]  /v2.1/os-instance_usage_audit_log[/{before}]   usage.go
//	GET  /ingot/v1/nodes  /healthz  /readyz  /metrics
//
// Who may call what: authz.go (every guarded route authenticates and
// decides with a rule of internal/policy; another project's resource is 404).
//
// Deliberate differences from Nova: the name filter is a case-sensitive
// regular expression in Go's RE2 syntax (Nova's is Python's, with the
// database's case rules); omitted networks mean "auto" (the first
// configured network) at every microversion, where Nova requires the member
// from 2.37 (docs/clients.md); create fields
// ingot cannot honour (ports, fixed IPs, other security groups) are
// refused with 400 rather than ignored. Bodies carry exactly Nova's
// members; the extension members ("ingot:phase", "ingot:fault",
// "ingot:attempts") only with the request header X-Ingot-Extensions: true.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/auth"
	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// maxBodyBytes caps request bodies; a create body is a few KiB at most
// (user_data is limited to 64 KiB by Nova).
const maxBodyBytes = 1 << 20

// Config is what the API needs. Store and Catalog are required. Flavors
// are read from the store: New seeds Catalog.Flavors into it (SeedFlavors;
// a caller that wants the error seeds first and leaves them out).
type Config struct {
	Store    store.Store
	Catalog  *catalog.Catalog
	Networks network.Networks
	Clock    clock.Clock // nil: the wall clock
	// BuildTimeout sets a new server's deadline (0: the lifecycle's default).
	BuildTimeout time.Duration
	// Kick wakes the reconciler after a committed write; it is called in
	// the request, so it must not block. May be nil.
	Kick func()
	// Nodes lists the Ironic inventory for GET /ingot/v1/nodes. May be nil.
	Nodes func(ctx context.Context) ([]ironic.Node, error)
	// RescueInterface reads a node's rescue_interface, so that a rescue
	// Ironic would refuse is a 409 (nil: not checked).
	RescueInterface func(ctx context.Context, nodeID string) (string, error)
	// DisableInstancePassword generates no admin password at create or
	// rebuild and leaves adminPass out of the create, rescue and rebuild
	// answers (Nova's enable_instance_password = false).
	DisableInstancePassword bool
	// Logger receives request logs (nil: discarded).
	Logger *slog.Logger
	// Ready reports whether the database and Ironic answer (nil: Store.Ping).
	Ready func(ctx context.Context) error
	// Replica, when set, is shown by /readyz, which then answers JSON:
	// {"status": "ok"|"not ready", "error": …, "replica": Replica()} (the
	// shard leases this replica holds, docs/DESIGN.md §2.10).
	Replica func() any
	// Metrics serves /metrics. May be nil.
	Metrics http.Handler

	// Auth resolves the caller (nil: noauth, project and user "ingot", every role).
	Auth auth.Authenticator
	// AuthURL is Keystone's, named in 401 answers (WWW-Authenticate).
	AuthURL string
	// Policy decides what the caller may do (nil: the built-in defaults).
	Policy *policy.Enforcer
	// Quotas are every project's default limits (nil: unlimited servers,
	// 100 keypairs, 128 metadata items).
	Quotas store.Limits
	// PublicURL is the root of links (scheme://host[:port]); empty: the
	// address a request arrived on. TrustedProxies may set it per request
	// with X-Forwarded-Host/-Proto.
	PublicURL      string
	TrustedProxies []netip.Prefix

	// Host is this replica's host (os-services, os-hypervisors, os-hosts).
	Host string
	// ServiceDownTime: a service whose heartbeat is older is down
	// (default 60 s, Nova's service_down_time).
	ServiceDownTime time.Duration
	// Inventory lists every Ironic node for os-hypervisors from a cache
	// (nil: Nodes).
	Inventory func(ctx context.Context) ([]ironic.Node, error)
}

type server struct {
	cfg Config
	log *slog.Logger
	mux *http.ServeMux
	// routeList is every registered pattern (Routes).
	routeList []Route
	// started stands in for created_at/updated_at of the configured images.
	started string
}

// request is one API call with what the middleware resolved for it.
type request struct {
	*http.Request
	id string  // x-openstack-request-id, also the request id of a create or delete action
	mv version // the compute microversion (minimum for non-compute routes)

	ident      auth.Identity // who asks (zero on public routes)
	pol        *policy.Enforcer
	authorized bool // the handler made its policy decision (authorize)
}

// handlerFunc answers a request. A returned *apiError is sent in Nova's
// shape; any other error becomes a logged 500 computeFault.
type handlerFunc func(w http.ResponseWriter, r *request) error

// New returns the API handler.
func New(cfg Config) http.Handler {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.BuildTimeout <= 0 {
		cfg.BuildTimeout = lifecycle.DefaultConfig().BuildTimeout
	}
	if cfg.Catalog == nil {
		cfg.Catalog = &catalog.Catalog{}
	}
	if cfg.Kick == nil {
		cfg.Kick = func() {}
	}
	if cfg.Ready == nil {
		cfg.Ready = cfg.Store.Ping
	}
	if cfg.Auth == nil {
		cfg.Auth = auth.NoAuth{ProjectID: "ingot", UserID: "ingot", Roles: []string{"admin", "member", "reader"}}
	}
	if cfg.Policy == nil {
		p, err := policy.New(nil)
		if err != nil {
			panic(err) // the built-in table is fixed and tested
		}
		cfg.Policy = p
	}
	if cfg.Quotas == nil {
		cfg.Quotas = DefaultQuotas()
	}
	s := &server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux(),
		started: cfg.Clock.Now().UTC().Format(novaTime)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Catalog.Flavors) > 0 {
		if err := SeedFlavors(context.Background(), cfg.Store, cfg.Catalog.Flavors); err != nil {
			s.log.Error("api: configured flavors not stored", "err", err)
		}
	}
	s.routes()
	return s
}

// routes registers every endpoint. compute routes check the microversion;
// the others (version documents, Glance/Neutron look-ups, ops) ignore it.
func (s *server) routes() {
	s.public("GET /{$}", s.versionsList)
	s.public("GET /v2.1", s.versionDoc)
	s.public("GET /v2.1/{$}", s.versionDoc)

	s.compute("POST /v2.1/servers", s.createServer)
	s.compute("GET /v2.1/servers", s.listServers)
	s.compute("GET /v2.1/servers/detail", s.listServersDetail)
	s.compute("GET /v2.1/servers/{id}", s.showServer)
	s.compute("DELETE /v2.1/servers/{id}", s.deleteServer)
	s.compute("POST /v2.1/servers/{id}/action", s.serverAction)
	s.compute("GET /v2.1/servers/{id}/os-instance-actions", s.listActions)
	s.compute("GET /v2.1/servers/{id}/os-instance-actions/{req}", s.showAction)

	s.compute("GET /v2.1/flavors", ownRule(policy.Flavors, s.listFlavors))
	s.compute("GET /v2.1/flavors/detail", ownRule(policy.Flavors, s.listFlavorsDetail))
	s.compute("GET /v2.1/flavors/{id}", ownRule(policy.Flavors, s.showFlavor))
	s.compute("GET /v2.1/flavors/{id}/os-extra_specs", ownRule(policy.FlavorExtraSpecsIndex, s.flavorExtraSpecs))
	s.compute("GET /v2.1/flavors/{id}/os-extra_specs/{key}", ownRule(policy.FlavorExtraSpecsShow, s.flavorExtraSpec))

	s.adminRoutes()
	s.lookupRoutes()
	s.novaNetworkRoutes()
	s.serverPasswordRoutes()
	s.diagnosticsRoutes()
	s.extensionRoutes()
	s.conformanceRoutes()
	s.usageRoutes()
	s.subresourceRoutes()
	s.updateRoutes()
	s.volumeRoutes()

	s.plain("GET /ingot/v1/nodes", ownRule(policy.NodesIndex, s.listNodes))
	s.identityRoutes()
	s.public("GET /healthz", s.healthz)
	s.public("GET /readyz", s.readyz)
	if s.cfg.Metrics != nil {
		s.mux.Handle("GET /metrics", s.cfg.Metrics)
		s.routeList = append(s.routeList, Route{Pattern: "GET /metrics", Public: true})
	}
}

// compute registers a compute route (microversion checked), plain a
// guarded route without microversions, public one that answers anyone.
func (s *server) compute(pattern string, h handlerFunc) { s.handle(pattern, h, true, false) }
func (s *server) plain(pattern string, h handlerFunc)   { s.handle(pattern, h, false, false) }
func (s *server) public(pattern string, h handlerFunc)  { s.handle(pattern, h, false, true) }

func (s *server) handle(pattern string, h handlerFunc, compute, public bool) {
	s.mux.Handle(pattern, s.wrap(h, compute, public))
	s.routeList = append(s.routeList, Route{Pattern: pattern, Public: public})
}

// ServeHTTP stamps every response with a request id and turns the mux's own
// plain-text 404/405 into Nova-shaped bodies.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := "req-" + uuid.NewString()
	w.Header().Set("X-Openstack-Request-Id", id)
	w.Header().Set("X-Compute-Request-Id", id)
	r = r.WithContext(withBase(context.WithValue(r.Context(), requestIDKey{}, id), s.publicBase(r)))
	if h, pattern := s.mux.Handler(r); pattern == "" {
		h.ServeHTTP(&muxErrorWriter{ResponseWriter: w}, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

type requestIDKey struct{}

// wrap adapts a handlerFunc: microversion check (compute routes), body cap,
// error rendering, panic containment and logging.
func (s *server) wrap(h handlerFunc, compute, public bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		start := time.Now()
		id, _ := hr.Context().Value(requestIDKey{}).(string)
		req := &request{Request: hr, id: id, mv: minVersion, pol: s.cfg.Policy}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		if !public {
			sw.guard = func() bool {
				if !req.authorized {
					s.unguarded(req)
				}
				return req.authorized
			}
		}
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("api: handler panic", "request_id", id, "method", hr.Method, "path", hr.URL.Path, "panic", p)
				if !sw.wrote {
					writeError(sw, http.StatusInternalServerError, "The server has either erred or is incapable of performing the requested operation.")
				}
			}
			level := slog.LevelDebug
			if sw.status >= 500 {
				level = slog.LevelError
			}
			// The path only: query strings and bodies may carry what is
			// not ours to log.
			s.log.Log(hr.Context(), level, "api request", "request_id", id, "method", hr.Method,
				"path", hr.URL.Path, "status", sw.status, "duration", time.Since(start),
				"project", req.ident.ProjectID, "user", req.ident.UserID)
		}()
		if !public && !s.authenticate(sw, req) {
			return
		}
		if err := jsonBody(hr); err != nil {
			s.fail(sw, req, err)
			return
		}
		if compute {
			mv, err := parseVersion(headerVersion(hr.Header))
			if err != nil {
				s.fail(sw, req, err)
				return
			}
			req.mv = mv
			setVersionHeaders(sw.Header(), mv)
		}
		if hr.Body != nil {
			hr.Body = http.MaxBytesReader(sw, hr.Body, maxBodyBytes)
		}
		if err := h(sw, req); err != nil {
			s.fail(sw, req, err)
		}
	})
}

// fail answers err: its own status when it is an *apiError, else 500.
func (s *server) fail(w http.ResponseWriter, r *request, err error) {
	if ae, ok := asAPIError(err); ok {
		writeError(w, ae.status, ae.message)
		return
	}
	if errors.Is(err, context.Canceled) {
		// The client went away; nobody reads this answer.
		writeError(w, http.StatusServiceUnavailable, "request cancelled")
		return
	}
	s.log.Error("api: internal error", "request_id", r.id, "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, "The server has either erred or is incapable of performing the requested operation.")
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
	// guard, on guarded routes, says whether a success may be sent: the
	// handler decided with its policy rule (else the answer becomes a 500).
	guard   func() bool
	refused bool
}

func (s *statusWriter) WriteHeader(code int) {
	if s.refused {
		return
	}
	if !s.wrote && code < 400 && s.guard != nil && !s.guard() {
		s.refused, s.wrote, s.status = true, true, http.StatusInternalServerError
		writeError(s.ResponseWriter, http.StatusInternalServerError, "The server has either erred or is incapable of performing the requested operation.")
		return
	}
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	if s.refused {
		return len(b), nil
	}
	return s.ResponseWriter.Write(b)
}

func (s *server) healthz(w http.ResponseWriter, r *request) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
	return nil
}

func (s *server) readyz(w http.ResponseWriter, r *request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if s.cfg.Replica != nil {
		body := map[string]any{"status": "ok", "replica": s.cfg.Replica()}
		code := http.StatusOK
		if err := s.cfg.Ready(ctx); err != nil {
			body["status"], body["error"], code = "not ready", err.Error(), http.StatusServiceUnavailable
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		return json.NewEncoder(w).Encode(body)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err := s.cfg.Ready(ctx); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("not ready: " + err.Error() + "\n"))
		return nil
	}
	_, _ = w.Write([]byte("ok\n"))
	return nil
}
