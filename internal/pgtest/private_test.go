package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPrivateRestarts: a private cluster answers, stops answering when
// stopped, and answers again once started.
func TestPrivateRestarts(t *testing.T) {
	c := Private(t)
	ping := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, c.DSN)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		return conn.Ping(ctx)
	}
	if err := ping(); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	if err := ping(); err == nil {
		t.Fatal("stopped server answers")
	}
	c.Start()
	if err := ping(); err != nil {
		t.Fatal(err)
	}
}

// TestStandbyPromoted: a row written on the primary is on its synchronous
// standby; the primary killed and the standby promoted, the multi-host
// DSN reaches the standby and writes there.
func TestStandbyPromoted(t *testing.T) {
	primary := Private(t)
	standby := primary.Standby()
	primary.exec("CREATE TABLE t (v int)", "INSERT INTO t VALUES (1)")
	primary.Kill()
	standby.Promote()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, MultiHost(primary, standby))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "INSERT INTO t VALUES (2) RETURNING (SELECT count(*) FROM t)").Scan(&n); err != nil || n != 1 {
		t.Fatalf("insert on the promoted standby: %v (rows before %d, want 1)", err, n)
	}
}
