package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/reconciler"
)

// newCinder is the Cinder client of volume.backend: cinder (nil for the
// embedded registry). Its calls carry ingot's own token both as the
// user's and as X-Service-Token (ingot's user has the roles admin and
// service, as Nova's): Cinder then treats them as the compute service's
// and never asks the compute endpoint back about an attachment ingot
// deletes. The API's calls carry the caller's token instead (WithUser),
// ingot's still as the service token. The endpoint comes from the
// catalog unless volume.cinder.url names it.
func newCinder(ctx context.Context, cfg config.Config, id *identity, clk clock.Clock) (*cinder.Client, error) {
	if !cfg.UsesCinder() {
		return nil, nil
	}
	if id.keystone == nil {
		return nil, fmt.Errorf("volume.backend cinder: no Keystone service credentials (auth.keystone)")
	}
	own := &freshToken{pc: id.keystone.Provider(), clk: clk, maxAge: tokenMaxAge}
	k := cfg.Auth.Keystone
	c, err := cinder.New(ctx, cinder.Config{Endpoint: cfg.Volume.Cinder.URL, Identity: k.AuthURL, Region: k.Region,
		Interface: k.Interface, User: own, Service: own, AllProjects: true,
		HTTPClient: &http.Client{Timeout: cfg.Volume.Cinder.Timeout}})
	if err != nil {
		return nil, fmt.Errorf("volume.backend cinder: %w", err)
	}
	return c, nil
}

// reconcilerCinder is c as the reconciler takes it: nil (no interface
// holding a nil pointer) for the embedded registry.
func reconcilerCinder(c *cinder.Client) reconciler.Cinder {
	if c == nil {
		return nil
	}
	return c
}

// embeddedVolumes is the API's view of volume.embedded.
func embeddedVolumes(cfg config.Config) core.EmbeddedVolumes {
	e := cfg.Volume.Embedded
	return core.EmbeddedVolumes{Portal: e.Portal, IQNPrefix: e.IQNPrefix, RecordsOnly: e.RecordsOnly}
}

// tokenMaxAge is how long ingot's own token is sent to Cinder before it is
// renewed: half of Keystone's default expiration (1 h), so a replica whose
// API has been idle (nothing else renews the token then) never sends an
// expired one.
const tokenMaxAge = 30 * time.Minute

// freshToken is ingot's own token from the Keystone provider, renewed once
// it has been in use for maxAge.
type freshToken struct {
	pc     *gophercloud.ProviderClient
	clk    clock.Clock
	maxAge time.Duration

	mu   sync.Mutex
	tok  string
	seen time.Time // when tok was first handed out
}

func (f *freshToken) Token(ctx context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clk.Now()
	if cur := f.pc.Token(); cur != f.tok {
		f.tok, f.seen = cur, now // renewed elsewhere (a 401 on another call)
	}
	if f.tok != "" && now.Sub(f.seen) >= f.maxAge {
		if err := f.pc.Reauthenticate(ctx, f.tok); err != nil {
			return "", fmt.Errorf("renew ingot's token: %w", err)
		}
		f.tok, f.seen = f.pc.Token(), now
	}
	if f.tok == "" {
		return "", errors.New("ingot's Keystone provider has no token")
	}
	return f.tok, nil
}
