// Package core is the HTTP core the API's services share: the request
// context, authentication and policy checks, microversion parsing, Nova-shaped
// error bodies, JSON reading and writing, strict body decoding and paging.
package core

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/google/uuid"
	"github.com/ingot-dev/ingot/internal/auth"
	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/hostcheck"
	"github.com/ingot-dev/ingot/internal/ironic"
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
	// Neutron, when set, is the network backend a create's networks are
	// resolved against instead of Networks (network.backend neutron).
	Neutron Neutron
	// NetworkNames names Neutron's networks in addresses (with Neutron).
	NetworkNames NetworkNames
	// SecurityGroupsAs, with Neutron, is Neutron with a caller's token:
	// Nova's security group proxy, a create's security_groups and the
	// add/removeSecurityGroup actions (nil: no security groups).
	SecurityGroupsAs func(token string) SecurityGroups
	Clock            clock.Clock // nil: the wall clock
	// BuildTimeout sets a new server's deadline (0: the lifecycle's default).
	BuildTimeout time.Duration
	// InterfaceTimeout bounds an interface attach, which the API waits
	// for as Nova's does (0: the lifecycle's default).
	InterfaceTimeout time.Duration
	// Kick wakes the reconciler after a committed write, naming the
	// servers written (each one's work item is due at once); it is called
	// in the request, so it must not block. May be nil.
	Kick func(servers ...string)
	// Adopt runs an adoption from Ironic for POST /ingot/v1/adopt (an
	// *adopt.Adopter's, its report answered as JSON). nil: 501.
	Adopt func(ctx context.Context, req AdoptRequest) (any, error)
	// Nodes lists the Ironic inventory for GET /ingot/v1/nodes. May be nil.
	Nodes func(ctx context.Context) ([]ironic.Node, error)
	// RescueInterface reads a node's rescue_interface, so that a rescue
	// Ironic would refuse is a 409 (nil: not checked).
	RescueInterface func(ctx context.Context, nodeID string) (string, error)
	// DisableInstancePassword generates no admin password at create or
	// rebuild and leaves adminPass out of the create, rescue and rebuild
	// answers (Nova's enable_instance_password = false).
	DisableInstancePassword bool
	// Images, when set, is Glance (image.backend glance): image look-ups
	// and imageRef are resolved there with the caller's token, and Catalog's
	// images are not used.
	Images Images
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
	// Hosts, when set, are the names a request's Host may carry; any
	// other is 421 (DNS rebinding: set in noauth, where the API's
	// credentials are ambient). /healthz and /readyz answer any Host.
	Hosts *hostcheck.Allowlist

	// Host is this replica's host (os-services, os-hypervisors, os-hosts).
	Host string
	// ServiceDownTime: a service whose heartbeat is older is down
	// (default 60 s, Nova's service_down_time).
	ServiceDownTime time.Duration
	// Inventory lists every Ironic node for os-hypervisors from a cache
	// (nil: Nodes).
	Inventory func(ctx context.Context) ([]ironic.Node, error)
	// Cinder, when set, is where volumes live (volume.backend: cinder):
	// the API calls it with each caller's token, and /volume/v3 (the
	// embedded registry's) is not served.
	Cinder *cinder.Client
	// Embedded says where the embedded registry's volumes are served
	// (with no Cinder).
	Embedded EmbeddedVolumes
}

// EmbeddedVolumes is the embedded registry's target description: portal
// and IQN prefix of new volumes ("" each: the store's defaults), or
// RecordsOnly (no target server: a server asking for a volume is 400).
type EmbeddedVolumes struct {
	Portal, IQNPrefix string
	RecordsOnly       bool
}

// Env is what every service shares: the configuration, the logger, the
// router and the routes registered on it.
type Env struct {
	Cfg Config
	Log *slog.Logger
	Mux *http.ServeMux
	// routeList is every registered pattern (Routes).
	RouteList []Route
	// started stands in for created_at/updated_at of the configured images.
	Started string
	// Audit receives the audit trail (nil: none).
	Audit *Audit
}

// Request is one API call with what the middleware resolved for it.
type Request struct {
	*http.Request
	ID string  // x-openstack-request-id, also the request id of a create or delete action
	MV Version // the compute microversion (minimum for non-compute routes)

	Ident      auth.Identity // who asks (zero on public routes)
	pol        *policy.Enforcer
	Authorized bool // the handler made its policy decision (authorize)

	authFailure string // why authentication failed, for the audit line
	denied      string // the policy rule that refused the caller
}

// HandlerFunc answers a request. A returned *apiError is sent in Nova's
// shape; any other error becomes a logged 500 computeFault.
type HandlerFunc func(w http.ResponseWriter, r *Request) error

// Compute registers a compute route (microversion checked), plain a
// guarded route without microversions, public one that answers anyone.
func (s *Env) Compute(pattern string, h HandlerFunc) { s.handle(pattern, h, true, false) }
func (s *Env) Plain(pattern string, h HandlerFunc)   { s.handle(pattern, h, false, false) }
func (s *Env) Public(pattern string, h HandlerFunc)  { s.handle(pattern, h, false, true) }

func (s *Env) handle(pattern string, h HandlerFunc, compute, public bool) {
	s.Mux.Handle(pattern, s.wrap(h, compute, public))
	s.RouteList = append(s.RouteList, Route{Pattern: pattern, Public: public})
}

// ServeHTTP stamps every response with a request id and turns the mux's own
// plain-text 404/405 into Nova-shaped bodies.
func (s *Env) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := "req-" + uuid.NewString()
	w.Header().Set("X-Openstack-Request-Id", id)
	w.Header().Set("X-Compute-Request-Id", id)
	if s.Cfg.Hosts != nil && r.URL.Path != "/healthz" && r.URL.Path != "/readyz" && !s.Cfg.Hosts.Allowed(r) {
		s.Audit.host(r, id)
		writeError(w, http.StatusMisdirectedRequest, "This server does not answer to the name in the Host header (see api.allowed_hosts).")
		return
	}
	r = r.WithContext(withBase(context.WithValue(r.Context(), requestIDKey{}, id), s.publicBase(r)))
	if h, pattern := s.Mux.Handler(r); pattern == "" {
		h.ServeHTTP(&muxErrorWriter{ResponseWriter: w}, r)
		return
	}
	s.Mux.ServeHTTP(w, r)
}

type requestIDKey struct{}

// wrap adapts a handlerFunc: microversion check (compute routes), body cap,
// error rendering, panic containment and logging.
func (s *Env) wrap(h HandlerFunc, compute, public bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		start := time.Now()
		id, _ := hr.Context().Value(requestIDKey{}).(string)
		req := &Request{Request: hr, ID: id, MV: minVersion, pol: s.Cfg.Policy}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		if !public {
			sw.guard = func() bool {
				if !req.Authorized {
					s.unguarded(req)
				}
				return req.Authorized
			}
		}
		defer func() {
			if p := recover(); p != nil {
				s.Log.Error("api: handler panic", "request_id", id, "method", hr.Method, "path", hr.URL.Path, "panic", p)
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
			s.Log.Log(hr.Context(), level, "api request", "request_id", id, "method", hr.Method,
				"path", hr.URL.Path, "status", sw.status, "duration", time.Since(start),
				"project", req.Ident.ProjectID, "user", req.Ident.UserID)
			if !public {
				s.Audit.record(req, sw.status, sw.Header().Get("Location"))
			}
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
			req.MV = mv
			SetVersionHeaders(sw.Header(), mv)
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
func (s *Env) fail(w http.ResponseWriter, r *Request, err error) {
	if ae, ok := AsAPIError(err); ok {
		writeError(w, ae.Status, ae.Message)
		return
	}
	if errors.Is(err, context.Canceled) {
		// The client went away; nobody reads this answer.
		writeError(w, http.StatusServiceUnavailable, "request cancelled")
		return
	}
	if store.Unavailable(s.Cfg.Store, err) {
		// The database is away (restarting, unreachable): nothing was
		// recorded, and the same request may be sent again.
		s.Log.Warn("api: database unavailable", "request_id", r.ID, "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "The database is unavailable; try again later.")
		return
	}
	s.Log.Error("api: internal error", "request_id", r.ID, "method", r.Method, "path", r.URL.Path, "err", err)
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

// AdoptRequest is the body of POST /ingot/v1/adopt (adopt.Options).
type AdoptRequest struct {
	// From is "ironic" or "nova".
	From        string `json:"from"`
	DryRun      bool   `json:"dry_run"`
	NovaStopped bool   `json:"nova_stopped"`
	Project     string `json:"project"`
	Flavor      string `json:"flavor"`
}
