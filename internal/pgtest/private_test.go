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
