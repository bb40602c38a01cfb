package api

import (
	"context"
	"net/http"

	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/store"

	"github.com/ingot-dev/ingot/internal/api/admin"
	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/api/flavors"
	"github.com/ingot-dev/ingot/internal/api/keypairs"
	"github.com/ingot-dev/ingot/internal/api/lookup"
	"github.com/ingot-dev/ingot/internal/api/quotas"
	"github.com/ingot-dev/ingot/internal/api/secgroups"
	"github.com/ingot-dev/ingot/internal/api/servers"
	"github.com/ingot-dev/ingot/internal/api/volume"
)

// Config is what the API needs (core.Config).
type Config = core.Config

// AdoptRequest is what POST /ingot/v1/adopt asks of Config.Adopt.
type AdoptRequest = core.AdoptRequest

// Route is one registered endpoint (core.Route).
type Route = core.Route

// Service is the whole API: the shared core and every service over it.
type Service struct {
	*core.Env
	admin     *admin.Service
	flavors   *flavors.Service
	keypairs  *keypairs.Service
	lookup    *lookup.Service
	quotas    *quotas.Service
	secgroups *secgroups.Service
	servers   *servers.Service
	volume    *volume.Service
}

// newService wires the services over env; each holds the ones it calls.
func newService(env *core.Env) *Service {
	adm, vol := admin.New(env), volume.New(env)
	quo := quotas.New(env, vol)
	look := lookup.New(env, quo.ProjectLimits)
	fl := flavors.New(env, adm)
	return &Service{Env: env, admin: adm, flavors: fl, lookup: look, quotas: quo, volume: vol, secgroups: secgroups.New(env),
		keypairs: keypairs.New(env, quo),
		servers:  servers.New(env, adm, fl, look, quo)}
}

// Routes lists the endpoints of an API handler made by New (nil for any
// other handler).
func Routes(h http.Handler) []Route {
	if s, ok := h.(*Service); ok {
		return s.Routes()
	}
	return nil
}

// SeedFlavors stores the configured flavors (flavors.SeedFlavors).
func SeedFlavors(ctx context.Context, st store.Flavors, fs []catalog.Flavor) error {
	return flavors.SeedFlavors(ctx, st, fs)
}

// DefaultQuotas are the limits when the configuration gives none.
func DefaultQuotas() store.Limits { return quotas.DefaultQuotas() }
