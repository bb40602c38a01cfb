package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/ingot-dev/ingot/internal/adopt"
	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/cinder"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/glance"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/nova"
	"github.com/ingot-dev/ingot/internal/servicecatalog"
	"github.com/ingot-dev/ingot/internal/store"
)

// newAdopter builds what `ingot adopt` and POST /ingot/v1/adopt run.
func newAdopter(cfg config.Config, st store.Store, ic *ironic.Client, nc *neutron.Client, vc *cinder.Client, ident *identity,
	clk clock.Clock, step func(string), kick func(...string)) (*adopt.Adopter, error) {
	image, err := adoptImages(cfg, ident)
	if err != nil {
		return nil, err
	}
	d := adopt.Deps{Store: st, Ironic: ic, Image: image, Now: clk.Now, Step: step, Kick: kick,
		DefaultProject: firstNonEmpty(cfg.Adopt.Project, cfg.Auth.NoAuth.ProjectID)}
	if nc != nil {
		d.Neutron = nc
	} else {
		d.Networks = cfg.NetworkList()
	}
	if vc != nil {
		d.Cinder = vc // read only: adopt.Cinder has no write
	}
	if ident.keystone != nil {
		// Nova's API is optional: FromNova says when it is not in the catalog.
		sc, err := servicecatalog.Compute(ident.keystone.Provider(),
			servicecatalog.Endpoint{Region: cfg.Adopt.NovaRegion, Interface: cfg.Adopt.NovaInterface})
		if err == nil {
			d.Nova = nova.New(sc, cfg.Ironic.Timeout)
		}
	}
	return adopt.New(d), nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// adoptHook is the API's POST /ingot/v1/adopt.
func (a *App) adoptHook(ctx context.Context, req core.AdoptRequest) (any, error) {
	opts := adopt.Options{DryRun: req.DryRun, NovaStopped: req.NovaStopped, Project: req.Project, Flavor: req.Flavor}
	if req.From == "nova" {
		return a.Adopter.FromNova(ctx, opts)
	}
	return a.Adopter.FromIronic(ctx, opts)
}

// adoptImages maps an instance's image_source to ingot's image: a
// configured image by URL or id, or, with Glance, the Glance image of
// that id as ingot's service user sees it.
func adoptImages(cfg config.Config, ident *identity) (func(context.Context, string) (string, error), error) {
	if cfg.Image.Backend == config.ImageGlance {
		if ident.keystone == nil {
			return nil, fmt.Errorf("image.backend glance needs Keystone (auth.strategy: keystone)")
		}
		sc, err := servicecatalog.Image(ident.keystone.Provider(),
			servicecatalog.Endpoint{Region: cfg.Image.Region, Interface: cfg.Image.Interface})
		if err != nil {
			return nil, fmt.Errorf("image.backend glance: %w", err)
		}
		gc := glance.New(sc, cfg.Image.Timeout)
		return func(ctx context.Context, src string) (string, error) {
			img, err := gc.GetImage(ctx, src)
			if errors.Is(err, glance.ErrImageNotFound) {
				return "", fmt.Errorf("%w: Glance has no image %s", adopt.ErrImageNotFound, src)
			}
			if err != nil {
				return "", err
			}
			return img.ID, nil
		}, nil
	}
	images := cfg.Catalog().Images
	return func(_ context.Context, src string) (string, error) { return catalogImage(images, src) }, nil
}

func catalogImage(images []catalog.Image, src string) (string, error) {
	for _, i := range images {
		if i.URL == src || strings.EqualFold(i.ID, src) {
			return i.ID, nil
		}
	}
	return "", fmt.Errorf("%w: no configured image has url or id %s", adopt.ErrImageNotFound, src)
}

// errReadOnly refuses every Ironic write of `ingot adopt`'s client.
var errReadOnly = errors.New("adopt: no Ironic write (read-only client)")

// Adoption is an adopter over its own connections, for `ingot adopt`: the
// database locked as serve locks it (stop ingot first, or call the running
// one's POST /ingot/v1/adopt), nothing started that acts on servers.
type Adoption struct {
	*adopt.Adopter
	a *App
}

// Close releases the database and the connections.
func (x *Adoption) Close() { x.a.Close() }

// OpenAdoption opens what an adoption needs from a normalized configuration.
func OpenAdoption(ctx context.Context, cfg config.Config, log *slog.Logger, step func(string)) (*Adoption, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Ironic.URL == "sim" {
		return nil, errors.New("adopt: ironic.url is sim: adopt reads a real Ironic")
	}
	a := &App{Config: cfg, Log: log, clock: clock.Real{}}
	if err := a.openDatabase(ctx, nil); err != nil {
		return nil, err
	}
	st := a.Store
	ident, err := newIdentity(ctx, cfg, a.clock, log)
	if err != nil {
		a.Close()
		return nil, err
	}
	icfg := ironicConfig(cfg, cfg.Ironic.URL, ident, nil)
	// I13 made structural: this client cannot change anything in Ironic.
	icfg.BeforeSend = func(context.Context) error { return errReadOnly }
	ic, err := ironic.New(icfg)
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("ironic: %w", err)
	}
	_, nc, _, err := networkBackend(cfg, ident, st, Options{Clock: a.clock})
	if err != nil {
		a.Close()
		return nil, err
	}
	vc, err := newCinder(ctx, cfg, ident, a.clock)
	if err != nil {
		a.Close()
		return nil, err
	}
	ad, err := newAdopter(cfg, st, ic, nc, vc, ident, a.clock, step, nil)
	if err != nil {
		a.Close()
		return nil, err
	}
	return &Adoption{Adopter: ad, a: a}, nil
}
