package app

import (
	"fmt"
	"log/slog"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/glance"
	"github.com/ingot-dev/ingot/internal/servicecatalog"
)

// imageBackend is Glance when image.backend is glance (nil: the configured
// images): Glance's endpoint from the catalog of ingot's service user, every
// image read with the caller's token, as Nova reads images.
func imageBackend(cfg config.Config, id *identity, log *slog.Logger) (core.Images, error) {
	if cfg.Image.Backend != config.ImageGlance {
		return nil, nil
	}
	if id.keystone == nil || cfg.Auth.Strategy != "keystone" {
		// config.Normalize refuses it; a caller that skipped it is told too.
		return nil, fmt.Errorf("image.backend glance needs Keystone (auth.strategy: keystone)")
	}
	sc, err := servicecatalog.Image(id.keystone.Provider(),
		servicecatalog.Endpoint{Region: cfg.Image.Region, Interface: cfg.Image.Interface})
	if err != nil {
		return nil, fmt.Errorf("image.backend glance: %w", err)
	}
	if len(cfg.Images) > 0 {
		log.Info("image.backend is glance: the images list of the configuration is not used", "images", len(cfg.Images))
	}
	log.Info("images from Glance", "endpoint", sc.Endpoint)
	return glance.NewAsUser(sc, cfg.Image.Timeout), nil
}
