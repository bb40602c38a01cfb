package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/store/backend"
	"github.com/ingot-dev/ingot/internal/store/sqlstore"
)

func newDBCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db",
		Short: "Operate on the database: migrate, back up, copy to another database",
		Long: `Operate on the database serve uses, found as serve finds it (--config,
--database, --dev with --data-dir).

  ingot db migrate [--check]   apply the pending schema migrations (--check: list them, exit 1 if any)
  ingot db backup FILE         a consistent copy of a SQLite database, taken while ingot serves
  ingot db copy --to DSN       move every table to an empty database (SQLite <-> PostgreSQL), verified`,
	}
	cmd.AddCommand(newDBMigrateCmd(), newDBBackupCmd(), newDBCopyCmd())
	return cmd
}

// dbConfig is the configuration the db commands read the database from.
func dbConfig(cmd *cobra.Command, f dbFlags) (config.Config, error) {
	return loadServeConfig(cmd, serveFlags{dbFlags: f})
}

func newDBMigrateCmd() *cobra.Command {
	var f dbFlags
	var check bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the pending schema migrations (--check: list them and exit 1 if any)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := dbConfig(cmd, f)
			if err != nil {
				return err
			}
			return dbMigrate(cmd.Context(), cmd.OutOrStdout(), cfg.Database, check)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&check, "check", false, "only list the pending migrations; exit 1 if there are any")
	return cmd
}

func dbMigrate(ctx context.Context, out io.Writer, dsn string, check bool) error {
	name := config.RedactDSN(dsn)
	st, err := backend.Inspect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("database %s: %w", name, err)
	}
	if check {
		if len(st.Pending) == 0 {
			fmt.Fprintf(out, "database %s is up to date (schema %s)\n", name, schemaOf(st))
			return nil
		}
		for _, m := range st.Pending {
			fmt.Fprintf(out, "pending %04d_%s\n", m.Version, m.Name)
		}
		return fmt.Errorf("database %s: %d migrations pending (schema %s): run ingot db migrate", name, len(st.Pending), schemaOf(st))
	}
	applied, err := backend.Migrate(ctx, dsn)
	if err != nil {
		return fmt.Errorf("database %s: %w", name, err)
	}
	for _, m := range applied {
		fmt.Fprintf(out, "applied %04d_%s\n", m.Version, m.Name)
	}
	if len(applied) == 0 {
		fmt.Fprintf(out, "database %s is up to date (schema %s)\n", name, schemaOf(st))
	}
	return nil
}

// schemaOf names the latest version a database records ("none" if fresh).
func schemaOf(st sqlstore.Status) string {
	if st.Fresh() {
		return "none"
	}
	return fmt.Sprintf("%04d", st.Applied[len(st.Applied)-1])
}

// checkSchema refuses, before serve opens the database, one this binary
// must not run on as it stands: one a newer ingot wrote, always; one at an
// older schema unless migrate (the operator's go-ahead: other replicas of
// the older release may still run on it). A fresh database gets its
// schema at open: nothing older runs on it.
func checkSchema(ctx context.Context, dsn string, migrate bool) error {
	st, err := backend.Inspect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("database %s: %w", config.RedactDSN(dsn), err)
	}
	if len(st.Pending) == 0 || st.Fresh() || migrate {
		return nil
	}
	names := make([]string, len(st.Pending))
	for i, m := range st.Pending {
		names[i] = fmt.Sprintf("%04d_%s", m.Version, m.Name)
	}
	return fmt.Errorf("database %s is at schema %s and this ingot needs %s (pending: %s): run ingot db migrate (with the same --config or --database), or serve --migrate",
		config.RedactDSN(dsn), schemaOf(st), names[len(names)-1][:4], strings.Join(names, ", "))
}

func newDBBackupCmd() *cobra.Command {
	var f dbFlags
	cmd := &cobra.Command{
		Use:   "backup FILE",
		Short: "Write a consistent copy of the SQLite database to FILE (0600) while ingot serves it",
		Long: `Write a consistent copy of the SQLite database to FILE, which must not exist,
while ingot serves it (one snapshot; writes go on meanwhile). FILE is 0600.

Restore: stop ingot, copy FILE over the database (removing its -wal and -shm
files), start ingot. A PostgreSQL database is backed up with pg_dump; the
command says which.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := dbConfig(cmd, f)
			if err != nil {
				return err
			}
			ctx, name := cmd.Context(), config.RedactDSN(cfg.Database)
			if _, err := backend.Inspect(ctx, cfg.Database); err != nil {
				return fmt.Errorf("database %s: %w", name, err)
			}
			t0 := time.Now()
			if err := backend.Backup(ctx, cfg.Database, args[0]); err != nil {
				return fmt.Errorf("database %s: %w", name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "backed up %s to %s in %s\n", name, args[0], time.Since(t0).Round(time.Millisecond))
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

func newDBCopyCmd() *cobra.Command {
	var f dbFlags
	var to string
	cmd := &cobra.Command{
		Use:   "copy --to DSN",
		Short: "Copy every table to an empty database (SQLite path or postgres:// URL), verified",
		Long: `Copy every table of the database to the one --to names (a SQLite path or a
postgres:// URL): migrated first, it must hold no row. Both databases are
locked as serve locks them, so stop ingot first; afterwards every table of
both is compared, and the row counts printed. Shard leases and replica
heartbeats are not copied: replicas claim them afresh at start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := dbConfig(cmd, f)
			if err != nil {
				return err
			}
			if to == "" {
				return errors.New("--to is required")
			}
			res, err := backend.Copy(cmd.Context(), cfg.Database, to, cfg.Host)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, t := range sqlstore.CopyTables {
				fmt.Fprintf(out, "%-22s %d\n", t, res.Counts[t])
			}
			fmt.Fprintf(out, "copied %s to %s in %s; verified (every table compared) in %s\n", config.RedactDSN(cfg.Database),
				config.RedactDSN(to), res.Copy.Round(time.Millisecond), res.Verified.Round(time.Millisecond))
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&to, "to", "", "the target database: a SQLite path or a postgres:// URL")
	return cmd
}
