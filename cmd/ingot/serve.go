package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/config"
)

type serveFlags struct {
	dbFlags
	listen    string
	ironicURL string
	logLevel  string
	migrate   bool
}

// dbFlags find the database: serve and the db commands share them.
type dbFlags struct {
	configPath string
	dev        bool
	dataDir    string
	database   string
}

func (f *dbFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&f.configPath, "config", "c", "", "configuration file (YAML); with --dev, read over the development defaults")
	fl.BoolVar(&f.dev, "dev", false, "development mode: SQLite in --data-dir, built-in simulated Ironic with 8 nodes, a default flavor, image and network")
	fl.StringVar(&f.dataDir, "data-dir", defaultDataDir(), "data directory for --dev")
	fl.StringVar(&f.database, "database", "", "SQLite path or postgres:// URL (overrides the config)")
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the ingot service (API + reconciler)",
		Long: `Run the ingot service: the Nova-compatible API and the reconciler that drives
every server to ACTIVE, ERROR or DELETED.

  ingot serve --dev                 SQLite in a data directory + a built-in simulated Ironic
  ingot serve --config ingot.yaml   your configuration (flags override it)
  ingot serve --dev --config x.yaml the development defaults, then the file's keys`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadServeConfig(cmd, f)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// --dev migrates by itself: a development database has no
			// older replicas to break.
			if err := checkSchema(ctx, cfg.Database, f.migrate || f.dev); err != nil {
				return err
			}
			return serve(ctx, cfg)
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "", "API listen address host:port (overrides the config)")
	fl.BoolVar(&f.migrate, "migrate", false, "apply pending schema migrations at start (without it, a database at an older schema is refused: run ingot db migrate)")
	fl.StringVar(&f.ironicURL, "ironic-url", "", `Ironic URL, or "sim" (overrides the config)`)
	fl.StringVar(&f.logLevel, "log-level", "", "debug, info, warn or error (overrides the config)")
	return cmd
}

func defaultDataDir() string {
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "ingot")
	}
	return "ingot-data"
}

func loadServeConfig(cmd *cobra.Command, f serveFlags) (config.Config, error) {
	var cfg config.Config
	switch {
	case f.dev:
		// 0700: the database and the simulator's state hold user_data.
		if err := os.MkdirAll(f.dataDir, 0o700); err != nil {
			return cfg, fmt.Errorf("data dir: %w", err)
		}
		cfg = config.Dev(f.dataDir)
		if f.configPath != "" {
			c, err := config.LoadOver(cfg, f.configPath)
			if err != nil {
				return cfg, err
			}
			cfg = c
		}
	case f.configPath != "":
		c, err := config.Load(f.configPath)
		if err != nil {
			return cfg, err
		}
		cfg = c
	default:
		cfg = config.Default()
	}
	if f.listen != "" {
		cfg.Listen = f.listen
	}
	if f.database != "" {
		cfg.Database = f.database
	}
	if f.ironicURL != "" {
		cfg.Ironic.URL = f.ironicURL
	}
	if f.logLevel != "" {
		cfg.LogLevel = f.logLevel
	}
	if err := cfg.Normalize(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(strings.ToUpper(level)))
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

// serve runs the service until ctx ends.
func serve(ctx context.Context, cfg config.Config) error {
	log := newLogger(cfg.LogLevel)
	if app.TuneGC(os.LookupEnv) {
		log.Debug("garbage collector", "gc_percent", app.DefaultGCPercent)
	}
	a, err := app.New(ctx, cfg, app.Options{Logger: log, Step: crashStep()})
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return a.Serve(ctx, ln)
}
