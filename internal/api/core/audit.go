package core

import (
	"context"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
)

// The audit trail: one INFO line with audit=true per failed
// authentication, policy denial, refused Host and state-changing request,
// so operators can route it apart from the request log. Each kind has its
// own token bucket, so a flood (a password sprayer, a script in a loop)
// cannot fill the disk: past the burst, lines are counted, and the next
// line of that kind once the bucket refills is preceded by one "audit
// suppressed" line with the count.

// Audit kinds (the kind field).
const (
	AuditAuthFailure = "auth_failure"  // 401, or a token that is not project-scoped
	AuditDenied      = "policy_denial" // 403 of a policy rule
	AuditChange      = "change"        // POST, PUT, PATCH or DELETE that was authenticated
	AuditHost        = "misdirected"   // 421: a Host this server does not answer to
)

// auditRate is each kind's bucket: burst lines at once, then perSecond.
var auditRate = map[string]struct{ burst, perSecond float64 }{
	AuditAuthFailure: {50, 5},
	AuditDenied:      {50, 5},
	AuditHost:        {20, 1},
	AuditChange:      {500, 100},
}

// Audit writes the audit lines. A nil *Audit writes nothing.
type Audit struct {
	log   *slog.Logger
	clock clock.Clock
	mu    sync.Mutex
	kinds map[string]*bucket
}

type bucket struct {
	tokens     float64
	last       time.Time
	suppressed int
}

// NewAudit writes to log (with audit=true) at the pace of c.
func NewAudit(log *slog.Logger, c clock.Clock) *Audit {
	if c == nil {
		c = clock.Real{}
	}
	return &Audit{log: log.With(slog.Bool("audit", true)), clock: c, kinds: map[string]*bucket{}}
}

// admit takes a token of kind's bucket; it returns whether the line may
// be written and how many were suppressed since the last one written.
func (a *Audit) admit(kind string) (bool, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	rate := auditRate[kind]
	now := a.clock.Now()
	b := a.kinds[kind]
	if b == nil {
		b = &bucket{tokens: rate.burst, last: now}
		a.kinds[kind] = b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = min(rate.burst, b.tokens+el*rate.perSecond)
	}
	b.last = now
	if b.tokens < 1 {
		b.suppressed++
		return false, 0
	}
	b.tokens--
	n := b.suppressed
	b.suppressed = 0
	return true, n
}

// write logs one audit line of kind, unless its bucket is empty.
func (a *Audit) write(ctx context.Context, kind string, attrs ...slog.Attr) {
	if a == nil {
		return
	}
	ok, suppressed := a.admit(kind)
	if !ok {
		return
	}
	if suppressed > 0 {
		a.log.LogAttrs(ctx, slog.LevelInfo, "audit suppressed", slog.String("kind", kind), slog.Int("suppressed", suppressed))
	}
	a.log.LogAttrs(ctx, slog.LevelInfo, "audit", append([]slog.Attr{slog.String("kind", kind)}, attrs...)...)
}

// record writes the line a finished request deserves, at most one:
// an authentication failure, else a policy denial, else a change.
func (a *Audit) record(r *Request, status int, location string) {
	if a == nil {
		return
	}
	route := routeOf(r.Request)
	base := []slog.Attr{slog.String("request_id", r.ID), slog.String("method", r.Method), slog.String("route", route)}
	who := []slog.Attr{slog.String("user", r.Ident.UserID), slog.String("project", r.Ident.ProjectID)}
	switch {
	case r.authFailure != "":
		a.write(r.Context(), AuditAuthFailure, append(base, slog.String("reason", r.authFailure),
			slog.Int("status", status), slog.String("remote", r.RemoteAddr))...)
	case r.denied != "" && status == http.StatusForbidden:
		a.write(r.Context(), AuditDenied, append(append(base, who...), slog.String("rule", r.denied),
			slog.String("resource", resourceOf(r.Request, "")), slog.Int("status", status))...)
	case changes(r.Method):
		a.write(r.Context(), AuditChange, append(append(base, who...),
			slog.String("resource", resourceOf(r.Request, location)), slog.Int("status", status))...)
	}
}

// host writes the line of a request refused for its Host.
func (a *Audit) host(r *http.Request, id string) {
	a.write(r.Context(), AuditHost, slog.String("request_id", id), slog.String("method", r.Method),
		slog.String("path", r.URL.Path), slog.String("host", r.Host), slog.String("remote", r.RemoteAddr))
}

func changes(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// routeOf is the route's template ("/v2.1/servers/{id}/action").
func routeOf(r *http.Request) string {
	_, p, ok := strings.Cut(r.Pattern, " ")
	if !ok {
		return r.Pattern
	}
	return p
}

// resourceOf is the resource a request names: its {id}, else the last
// segment of the Location a create answered.
func resourceOf(r *http.Request, location string) string {
	if id := r.PathValue("id"); id != "" {
		return id
	}
	if location != "" {
		return path.Base(location)
	}
	return ""
}
