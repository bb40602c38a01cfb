// Package pgtest gives tests a fresh PostgreSQL database each: DSN creates
// one (ingot_t_<random>, from template0) on the server the machine runs and
// drops it when the test ends, so tests run in parallel and a CI replay
// starts clean.
//
// The server is INGOT_TEST_PG (a postgres:// URL of a database the tests
// may connect to and create databases from), default
// postgres://postgres@127.0.0.1:5432/test (trust auth). The one rule of the
// README applies: an unreachable server skips the test, unless
// INGOT_TEST_IRONIC=1 (CI), where it fails.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvVar names the server the tests use.
const EnvVar = "INGOT_TEST_PG"

// DefaultServer is the server when EnvVar is unset.
const DefaultServer = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Server returns the admin DSN tests create their databases through.
func Server() string {
	if v := os.Getenv(EnvVar); v != "" {
		return v
	}
	return DefaultServer
}

// required reports whether a missing PostgreSQL fails instead of skipping.
func required() bool { return os.Getenv("INGOT_TEST_IRONIC") == "1" }

// connect opens an admin connection or skips (fails in CI).
func connect(t testing.TB) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, Server())
	if err != nil {
		if required() {
			t.Fatalf("pgtest: PostgreSQL at %s is unreachable (INGOT_TEST_IRONIC=1 needs it; .ci/run starts it): %v", redact(Server()), err)
		}
		t.Skipf("pgtest: PostgreSQL at %s is unreachable: %v", redact(Server()), err)
	}
	return conn
}

// DSN creates a new empty database and returns its DSN; the database is
// dropped (its connections closed) when the test and its subtests end.
func DSN(t testing.TB) string {
	t.Helper()
	conn := connect(t)
	defer conn.Close(context.Background())
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "ingot_t_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0 ENCODING 'UTF8'"); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() { drop(t, name) })
	u, err := url.Parse(Server())
	if err != nil {
		t.Fatalf("pgtest: %s: %v", EnvVar, err)
	}
	u.Path = "/" + name
	return u.String()
}

func drop(t testing.TB, name string) {
	conn := connect(t)
	defer conn.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// FORCE ends the connections a failed test may have left open.
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Errorf("pgtest: drop database %s: %v", name, err)
	}
}

func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil {
		return u.Redacted()
	}
	return "(unparsable DSN)"
}
