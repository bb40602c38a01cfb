package pgtest

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/poll"
)

// Standby makes a streaming standby of c (pg_basebackup -R) on a port of
// its own and starts it; c's commits then wait for it
// (synchronous_standby_names '*'), so a failover to it loses no commit.
func (c *Cluster) Standby() *Cluster {
	c.t.Helper()
	s := newCluster(c.t, c.bin)
	if out, err := s.as(filepath.Join(c.bin, "pg_basebackup"), "-h", "127.0.0.1", "-p", fmt.Sprint(c.port), "-U", "postgres",
		"-D", s.data(), "-R", "-X", "stream", "-c", "fast").CombinedOutput(); err != nil {
		c.t.Fatalf("pgtest: pg_basebackup: %v\n%s", err, out)
	}
	s.Start()
	c.exec("ALTER SYSTEM SET synchronous_standby_names = '*'", "SELECT pg_reload_conf()")
	poll.Until(c.t, time.Minute, "the standby streaming synchronously", func() (bool, string) {
		state := ""
		c.query("SELECT coalesce(max(sync_state), '') FROM pg_stat_replication", &state)
		return state == "sync", state
	})
	return s
}

// Promote makes a standby the primary and waits until it accepts writes.
func (c *Cluster) Promote() {
	c.t.Helper()
	if err := c.ctl(c.bin, "promote", "-w", "-t", "60"); err != nil {
		c.t.Fatalf("pgtest: %v", err)
	}
}

// Kill stops the server at once, as a crash does (immediate: no
// checkpoint, sessions cut).
func (c *Cluster) Kill() {
	c.t.Helper()
	if err := c.ctl(c.bin, "stop", "-w", "-m", "immediate"); err != nil {
		c.t.Fatalf("pgtest: kill: %v", err)
	}
}

// MultiHost is a DSN naming every cluster, first to last, that connects
// only to the one accepting writes (target_session_attrs=read-write), as
// a client of a primary with a standby is configured.
func MultiHost(cs ...*Cluster) string {
	hosts := ""
	for i, c := range cs {
		if i > 0 {
			hosts += ","
		}
		hosts += fmt.Sprintf("127.0.0.1:%d", c.port)
	}
	return "postgres://postgres@" + hosts + "/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2"
}

func (c *Cluster) exec(stmts ...string) {
	c.t.Helper()
	c.with(func(ctx context.Context, conn *pgx.Conn) error {
		for _, q := range stmts {
			if _, err := conn.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
}

func (c *Cluster) query(q string, out any) {
	c.t.Helper()
	c.with(func(ctx context.Context, conn *pgx.Conn) error { return conn.QueryRow(ctx, q).Scan(out) })
}

// with runs fn on a connection of its own to the cluster.
func (c *Cluster) with(fn func(context.Context, *pgx.Conn) error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN)
	if err != nil {
		c.t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	if err := fn(ctx, conn); err != nil {
		c.t.Fatalf("pgtest: %v", err)
	}
}
