package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
)

// diagnose warns at start-up about what makes every create fail later
// with a less helpful message: no flavor or image to build with, an
// Ironic that does not answer, or no node of a flavor's resource class.
// It never stops the start: Ironic may come up later, and flavors can be
// created through the API.
func (a *App) diagnose(ctx context.Context) {
	log := a.Log.With("check", "start-up")
	flavors, err := a.Store.ListFlavors(ctx, "")
	switch {
	case err != nil:
		log.Warn("cannot list flavors", "err", err)
	case len(flavors) == 0:
		log.Warn("no flavors: every create fails with \"Flavor … could not be found\"; add flavors[] to the configuration or create one (openstack flavor create)")
	}
	if len(a.Config.Images) == 0 && a.Config.Image.Backend != config.ImageGlance {
		log.Warn("no images configured (images[]): every create with an imageRef fails with \"Image … could not be found\"")
	}
	if len(a.Config.Networks) == 0 {
		log.Info("no networks configured (networks[]): servers get no addresses")
	}
	timeout := min(5*time.Second, a.Config.Ironic.Timeout)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := a.Ironic.Ping(pctx); err != nil {
		log.Warn("Ironic does not answer: builds wait for it and fail ironic_unavailable past build_timeout",
			"ironic", a.IronicURL, "err", err)
		return
	}
	nodes, err := a.Ironic.ListNodes(pctx)
	if err != nil {
		log.Warn("cannot list Ironic's nodes", "ironic", a.IronicURL, "err", err)
		return
	}
	if len(nodes) == 0 {
		log.Warn("Ironic has no nodes: every create ends no_valid_host", "ironic", a.IronicURL)
		return
	}
	classes := map[string]int{}
	for _, n := range nodes {
		classes[n.ResourceClass]++
	}
	for _, f := range flavors {
		if f.ResourceClass != "" && classes[f.ResourceClass] == 0 {
			log.Warn("no Ironic node has the resource class of this flavor: its creates end no_valid_host",
				"flavor", f.Name, "resource_class", f.ResourceClass, "nodes", len(nodes))
		}
	}
	log.Log(ctx, slog.LevelInfo, "Ironic answers", "ironic", a.IronicURL, "nodes", len(nodes))
}
