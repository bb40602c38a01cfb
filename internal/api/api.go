package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/api/flavors"
	"github.com/ingot-dev/ingot/internal/api/quotas"
	"github.com/ingot-dev/ingot/internal/auth"
	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
)

// New returns the API handler.
func New(cfg Config) http.Handler {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.BuildTimeout <= 0 {
		cfg.BuildTimeout = lifecycle.DefaultConfig().BuildTimeout
	}
	if cfg.Catalog == nil {
		cfg.Catalog = &catalog.Catalog{}
	}
	if cfg.Kick == nil {
		cfg.Kick = func(...string) {}
	}
	if cfg.Ready == nil {
		cfg.Ready = cfg.Store.Ping
	}
	if cfg.Auth == nil {
		cfg.Auth = auth.NoAuth{ProjectID: "ingot", UserID: "ingot", Roles: []string{"admin", "member", "reader"}}
	}
	if cfg.Policy == nil {
		p, err := policy.New(nil)
		if err != nil {
			panic(err) // the built-in table is fixed and tested
		}
		cfg.Policy = p
	}
	if cfg.Quotas == nil {
		cfg.Quotas = quotas.DefaultQuotas()
	}
	env := &core.Env{Cfg: cfg, Log: cfg.Logger, Mux: http.NewServeMux(),
		Started: cfg.Clock.Now().UTC().Format(core.NovaTime)}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	env.Audit = core.NewAudit(env.Log, cfg.Clock)
	s := newService(env)
	if len(cfg.Catalog.Flavors) > 0 {
		if err := flavors.SeedFlavors(context.Background(), cfg.Store, cfg.Catalog.Flavors); err != nil {
			s.Log.Error("api: configured flavors not stored", "err", err)
		}
	}
	s.routes()
	return s
}

// routes registers every endpoint. compute routes check the microversion;
// the others (version documents, Glance/Neutron look-ups, ops) ignore it.
func (s *Service) routes() {
	s.Public("GET /{$}", s.VersionsList)
	s.Public("GET /v2.1", s.VersionDoc)
	s.Public("GET /v2.1/{$}", s.VersionDoc)

	s.Compute("POST /v2.1/servers", s.servers.CreateServer)
	s.Compute("GET /v2.1/servers", s.servers.ListServers)
	s.Compute("GET /v2.1/servers/detail", s.servers.ListServersDetail)
	s.Compute("GET /v2.1/servers/{id}", s.servers.ShowServer)
	s.Compute("DELETE /v2.1/servers/{id}", s.servers.DeleteServer)
	s.Compute("POST /v2.1/servers/{id}/action", s.servers.ServerAction)
	s.Compute("GET /v2.1/servers/{id}/os-instance-actions", s.servers.ListActions)
	s.Compute("GET /v2.1/servers/{id}/os-instance-actions/{req}", s.servers.ShowAction)

	s.Compute("GET /v2.1/flavors", core.OwnRule(policy.Flavors, s.flavors.ListFlavors))
	s.Compute("GET /v2.1/flavors/detail", core.OwnRule(policy.Flavors, s.flavors.ListFlavorsDetail))
	s.Compute("GET /v2.1/flavors/{id}", core.OwnRule(policy.Flavors, s.flavors.ShowFlavor))
	s.Compute("GET /v2.1/flavors/{id}/os-extra_specs", core.OwnRule(policy.FlavorExtraSpecsIndex, s.flavors.FlavorExtraSpecs))
	s.Compute("GET /v2.1/flavors/{id}/os-extra_specs/{key}", core.OwnRule(policy.FlavorExtraSpecsShow, s.flavors.FlavorExtraSpec))

	s.admin.Register()
	s.flavors.ManageRoutes()
	s.servers.GroupRoutes()
	s.admin.AggregateRoutes()
	s.lookup.Register()
	s.lookup.NovaNetworkRoutes()
	s.secgroups.Register()
	s.servers.PasswordRoutes()
	s.servers.DiagnosticsRoutes()
	s.extensionRoutes()
	s.servers.ConformanceRoutes()
	s.servers.UsageRoutes()
	s.servers.SubresourceRoutes()
	s.servers.InterfaceRoutes()
	s.servers.VolumeAttachmentRoutes()
	s.servers.UpdateRoutes()
	if s.Cfg.Cinder == nil {
		s.volume.Register() // the embedded registry's /volume/v3
	} else {
		s.volume.CinderRoutes() // Nova's os-volumes proxy over Cinder
	}

	s.Plain("GET /ingot/v1/nodes", core.OwnRule(policy.NodesIndex, s.listNodes))
	s.Plain("POST /ingot/v1/adopt", core.OwnRule(policy.Adopt, s.adopt))
	s.identityRoutes()
	s.Public("GET /healthz", s.healthz)
	s.Public("GET /readyz", s.readyz)
	if s.Cfg.Metrics != nil {
		s.Mux.Handle("GET /metrics", s.Cfg.Metrics)
		s.RouteList = append(s.RouteList, core.Route{Pattern: "GET /metrics", Public: true})
	}
}

func (s *Service) healthz(w http.ResponseWriter, r *core.Request) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
	return nil
}

func (s *Service) readyz(w http.ResponseWriter, r *core.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if s.Cfg.Replica != nil {
		body := struct {
			Error   *string `json:"error,omitempty"`
			Replica any     `json:"replica"`
			Status  string  `json:"status"`
		}{Status: "ok", Replica: s.Cfg.Replica()}
		code := http.StatusOK
		if err := s.Cfg.Ready(ctx); err != nil {
			msg := err.Error()
			body.Status, body.Error, code = "not ready", &msg, http.StatusServiceUnavailable
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		return json.NewEncoder(w).Encode(body)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err := s.Cfg.Ready(ctx); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("not ready: " + err.Error() + "\n"))
		return nil
	}
	_, _ = w.Write([]byte("ok\n"))
	return nil
}
