// Package auth resolves an API request to the identity behind it, once per
// request: who the user is, which project the request acts for, and with
// which roles. Two strategies: NoAuth (development: headers say who you
// are) and Keystone (X-Auth-Token validated by Keystone v3 with ingot's own
// service token, cached). Nothing below the API ever sees a token.
package auth

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Identity is who a request is.
type Identity struct {
	UserID      string
	UserName    string
	ProjectID   string
	ProjectName string
	DomainID    string // the user's domain
	Roles       []string
	// ExpiresAt is the token's expiry (zero in noauth).
	ExpiresAt time.Time
}

// HasRole reports whether the identity holds role (names compare without case).
func (id Identity) HasRole(role string) bool {
	return slices.ContainsFunc(id.Roles, func(r string) bool { return strings.EqualFold(r, role) })
}

var (
	// ErrUnauthenticated: no token, or one Keystone does not know, or an
	// expired one. The API answers 401.
	ErrUnauthenticated = errors.New("auth: the request you have made requires authentication")
	// ErrNotProjectScoped: a valid token without a project (unscoped,
	// domain- or system-scoped). The API answers 403.
	ErrNotProjectScoped = errors.New("auth: a project-scoped token is required")
	// ErrUnavailable: Keystone could not be asked. The API answers 503.
	ErrUnavailable = errors.New("auth: the identity service is unavailable")
)

// Authenticator resolves a request's headers to an Identity.
type Authenticator interface {
	Authenticate(ctx context.Context, h http.Header) (Identity, error)
}

// NoAuth is the development strategy: no token is checked. The project is
// X-Auth-Project-Id (else ProjectID), the user X-Auth-User-Id (else
// UserID), and the roles X-Roles, comma-separated (else Roles) — so tests
// and curious users can act as a reader or a member of any project without
// Keystone. Never use it where others can reach the API.
type NoAuth struct {
	ProjectID, UserID string
	Roles             []string
}

// headerValueRE bounds what a noauth header may set: ids stored in the
// database and shown in bodies.
var headerValueRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Authenticate implements Authenticator. Malformed headers are refused as
// unauthenticated rather than stored.
func (n NoAuth) Authenticate(_ context.Context, h http.Header) (Identity, error) {
	id := Identity{ProjectID: n.ProjectID, UserID: n.UserID, Roles: n.Roles}
	if v := h.Get("X-Auth-Project-Id"); v != "" {
		if !headerValueRE.MatchString(v) {
			return Identity{}, ErrUnauthenticated
		}
		id.ProjectID = v
	}
	if v := h.Get("X-Auth-User-Id"); v != "" {
		if !headerValueRE.MatchString(v) {
			return Identity{}, ErrUnauthenticated
		}
		id.UserID = v
	}
	if h.Values("X-Roles") != nil {
		id.Roles = nil
		for _, line := range h.Values("X-Roles") {
			for _, r := range strings.Split(line, ",") {
				r = strings.TrimSpace(r)
				if r == "" {
					continue
				}
				if !headerValueRE.MatchString(r) {
					return Identity{}, ErrUnauthenticated
				}
				id.Roles = append(id.Roles, r)
			}
		}
	}
	id.ProjectName, id.UserName = id.ProjectID, id.UserID
	return id, nil
}
