package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/ingot-dev/ingot/internal/clock"
)

// KeystoneOptions are ingot's service credentials and the cache's bounds.
type KeystoneOptions struct {
	AuthURL           string // e.g. http://127.0.0.1:5000/v3
	Username          string
	Password          string
	ProjectName       string
	UserDomainName    string
	ProjectDomainName string
	// CacheTTL bounds how long a validated (or refused) token is believed
	// without asking Keystone again; never past the token's expiry. 0 asks
	// Keystone for every request.
	CacheTTL time.Duration
	// MaxEntries bounds the cache (default 10,000 tokens).
	MaxEntries int
	Timeout    time.Duration // per Keystone call (default 10 s)
	Clock      clock.Clock   // default the wall clock
	Logger     *slog.Logger
}

// maxTokenBytes: a Fernet token is about 200 bytes, a JWS one under 1 KiB.
// Anything much longer is refused without bothering Keystone.
const maxTokenBytes = 8 << 10

// Keystone validates X-Auth-Token with Keystone v3 (GET /v3/auth/tokens,
// authenticated with ingot's own token, which gophercloud renews when
// Keystone answers 401). Results are cached per token, keyed by the
// token's SHA-256 (the token itself is not kept); concurrent requests with
// one uncached token make one Keystone call.
type Keystone struct {
	provider *gophercloud.ProviderClient
	identity *gophercloud.ServiceClient
	opts     KeystoneOptions
	log      *slog.Logger

	mu     sync.Mutex
	cache  map[[32]byte]cached
	flight map[[32]byte]*flight

	calls atomic.Int64
}

type cached struct {
	id    Identity
	err   error // ErrUnauthenticated or ErrNotProjectScoped; nil for a valid token
	until time.Time
}

type flight struct {
	done chan struct{}
	id   Identity
	err  error
}

// NewKeystone authenticates ingot's service user (so a wrong password
// stops ingot at start, naming the user) and returns the validator.
func NewKeystone(ctx context.Context, o KeystoneOptions) (*Keystone, error) {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 10000
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	pc, err := openstack.NewClient(o.AuthURL)
	if err != nil {
		return nil, fmt.Errorf("keystone %s: %w", o.AuthURL, err)
	}
	pc.HTTPClient = http.Client{Timeout: o.Timeout}
	ao := gophercloud.AuthOptions{
		IdentityEndpoint: o.AuthURL, Username: o.Username, Password: o.Password, DomainName: o.UserDomainName,
		Scope:       &gophercloud.AuthScope{ProjectName: o.ProjectName, DomainName: o.ProjectDomainName},
		AllowReauth: true,
	}
	if err := openstack.Authenticate(ctx, pc, ao); err != nil {
		// gophercloud's error names the URL and status, never the password.
		return nil, fmt.Errorf("keystone: authenticate the service user %q (project %q) at %s: %w",
			o.Username, o.ProjectName, o.AuthURL, err)
	}
	idc, err := openstack.NewIdentityV3(pc, gophercloud.EndpointOpts{})
	if err != nil {
		return nil, fmt.Errorf("keystone: %w", err)
	}
	return &Keystone{provider: pc, identity: idc, opts: o, log: o.Logger,
		cache: map[[32]byte]cached{}, flight: map[[32]byte]*flight{}}, nil
}

// Provider is the authenticated client, for other OpenStack services
// (Ironic behind Keystone) with the same service credentials.
func (k *Keystone) Provider() *gophercloud.ProviderClient { return k.provider }

// Calls is how many token validations were sent to Keystone.
func (k *Keystone) Calls() int64 { return k.calls.Load() }

// Authenticate implements Authenticator.
func (k *Keystone) Authenticate(ctx context.Context, h http.Header) (Identity, error) {
	tok := h.Get("X-Auth-Token")
	if tok == "" || len(tok) > maxTokenBytes {
		return Identity{}, ErrUnauthenticated
	}
	key := sha256.Sum256([]byte(tok))
	now := k.opts.Clock.Now()
	k.mu.Lock()
	if c, ok := k.cache[key]; ok && now.Before(c.until) {
		k.mu.Unlock()
		return c.id, c.err
	}
	if f, ok := k.flight[key]; ok {
		k.mu.Unlock()
		select {
		case <-f.done:
			return f.id, f.err
		case <-ctx.Done():
			return Identity{}, fmt.Errorf("%w: %w", ErrUnavailable, ctx.Err())
		}
	}
	f := &flight{done: make(chan struct{})}
	k.flight[key] = f
	k.mu.Unlock()

	// The call serves every waiter: it does not end with the first caller.
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.opts.Timeout)
	f.id, f.err = k.validate(vctx, tok)
	cancel()

	k.mu.Lock()
	delete(k.flight, key)
	if f.err == nil || errors.Is(f.err, ErrUnauthenticated) || errors.Is(f.err, ErrNotProjectScoped) {
		k.store(key, f, k.opts.Clock.Now())
	}
	k.mu.Unlock()
	close(f.done)
	return f.id, f.err
}

// store caches an answer (k.mu held).
func (k *Keystone) store(key [32]byte, f *flight, now time.Time) {
	if k.opts.CacheTTL <= 0 {
		return
	}
	until := now.Add(k.opts.CacheTTL)
	if f.err == nil && f.id.ExpiresAt.Before(until) {
		until = f.id.ExpiresAt
	}
	if len(k.cache) >= k.opts.MaxEntries {
		for kk, c := range k.cache {
			if !now.Before(c.until) {
				delete(k.cache, kk)
			}
		}
		// Still full: drop about half (map order is random), so a flood
		// of distinct tokens costs Keystone calls, never memory.
		for kk := range k.cache {
			if len(k.cache) < k.opts.MaxEntries/2 {
				break
			}
			delete(k.cache, kk)
		}
	}
	k.cache[key] = cached{id: f.id, err: f.err, until: until}
}

// tokenBody is the part of Keystone's GET /v3/auth/tokens answer ingot
// reads (the "token" member; ExtractInto unwraps it).
type tokenBody struct {
	ExpiresAt string `json:"expires_at"`
	User      struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Domain struct {
			ID string `json:"id"`
		} `json:"domain"`
	} `json:"user"`
	Project *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"project"`
	Roles []struct {
		Name string `json:"name"`
	} `json:"roles"`
}

func (k *Keystone) validate(ctx context.Context, tok string) (Identity, error) {
	k.calls.Add(1)
	res := tokens.Get(ctx, k.identity, tok)
	if res.Err != nil {
		if gophercloud.ResponseCodeIs(res.Err, http.StatusNotFound) {
			return Identity{}, ErrUnauthenticated // unknown, revoked or expired
		}
		// 401/403 here mean ingot's own credentials or rights are wrong
		// (gophercloud already re-authenticated once): an operator's problem.
		k.log.Error("keystone: token validation failed", "err", res.Err)
		return Identity{}, fmt.Errorf("%w: %w", ErrUnavailable, res.Err)
	}
	var body tokenBody
	if err := res.ExtractInto(&body); err != nil {
		return Identity{}, fmt.Errorf("%w: token validation answer: %w", ErrUnavailable, err)
	}
	t := body
	exp, err := time.Parse(time.RFC3339Nano, t.ExpiresAt)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: token expires_at %q: %w", ErrUnavailable, t.ExpiresAt, err)
	}
	if !k.opts.Clock.Now().Before(exp) {
		return Identity{}, ErrUnauthenticated
	}
	if t.Project == nil || t.Project.ID == "" {
		return Identity{}, ErrNotProjectScoped
	}
	id := Identity{UserID: t.User.ID, UserName: t.User.Name, DomainID: t.User.Domain.ID,
		ProjectID: t.Project.ID, ProjectName: t.Project.Name, ExpiresAt: exp}
	for _, r := range t.Roles {
		id.Roles = append(id.Roles, r.Name)
	}
	return id, nil
}
