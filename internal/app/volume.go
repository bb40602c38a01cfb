package app

import (
	"context"
	"fmt"
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/cinder"
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
func newCinder(ctx context.Context, cfg config.Config, id *identity) (*cinder.Client, error) {
	if !cfg.UsesCinder() {
		return nil, nil
	}
	if id.keystone == nil {
		return nil, fmt.Errorf("volume.backend cinder: no Keystone service credentials (auth.keystone)")
	}
	own := cinder.ProviderToken(id.keystone.Provider())
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
