package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ownerKey is the session advisory lock key of the process that runs as
// replica host on the database: as the lock file beside a SQLite database,
// it keeps a second ingot under the same identity from running beside the
// first — two processes as one replica would share its leases and their
// epochs, so nothing would fence one from the other. Replicas of other
// hosts share the work by leases (docs/DESIGN.md §2.10). PostgreSQL drops
// the lock when the session ends, however the process ends.
func ownerKey(host string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("ingot owner " + host))
	return int64(h.Sum64())
}

// ErrOwnerHeld is matched (errors.Is) by the error AcquireOwner returns
// when another process holds the database.
var ErrOwnerHeld = errors.New("postgres: database held by another ingot")

// OwnerHeldError names the session holding the database.
type OwnerHeldError struct{ Holder string }

func (e *OwnerHeldError) Error() string {
	return "held by " + e.Holder + " (PostgreSQL advisory lock)"
}

// Is makes errors.Is(err, ErrOwnerHeld) true.
func (e *OwnerHeldError) Is(target error) bool { return target == ErrOwnerHeld }

// Owner is a held ownership of the database: one dedicated connection,
// named after the process (application_name), so a refused second
// process can say who holds it. The session is checked every
// ownerCheckInterval; when it is gone (the server restarted, the
// connection broke, an admin ended it) so is the lock, and Lost is closed:
// another ingot may own the database now, so this one must stop.
type Owner struct {
	mu   sync.Mutex // the connection is not safe for concurrent use
	conn *pgx.Conn
	pid  int

	lost       chan struct{}
	stop, done chan struct{}
	once       sync.Once
}

// ownerCheckInterval is how often the owner's session is checked.
const ownerCheckInterval = 2 * time.Second

// AcquireOwner takes the ownership of dsn's database without waiting: an
// *OwnerHeldError names the holder when another session has it.
func AcquireOwner(ctx context.Context, dsn, host string) (*Owner, error) {
	ownerLock := ownerKey(host)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	o := &Owner{pid: os.Getpid()}
	cfg.RuntimeParams["application_name"] = o.name("")
	defaultConnectTimeout(cfg)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	got, err := tryOwnerLock(ctx, conn, ownerLock)
	if err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("postgres: owner lock: %w", err)
	}
	if !got {
		holder := "another session"
		var app, addr string
		var since time.Time
		// A bigint advisory key is (classid, objid) = (high, low 32 bits), objsubid 1.
		err := conn.QueryRow(ctx, `SELECT a.application_name, COALESCE(host(a.client_addr), 'local'), a.backend_start
			FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
			  AND l.classid = ($1::bigint >> 32)::oid AND l.objid = ($1::bigint & 4294967295)::oid
			  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`, ownerLock).
			Scan(&app, &addr, &since)
		if err == nil {
			holder = fmt.Sprintf("%s, from %s, since %s", app, addr, since.UTC().Format(time.RFC3339))
		}
		conn.Close(context.Background())
		return nil, &OwnerHeldError{Holder: holder}
	}
	o.conn = conn
	o.lost, o.stop, o.done = make(chan struct{}), make(chan struct{}), make(chan struct{})
	go o.watch()
	return o, nil
}

// ownerRetry is how long a held owner lock is tried again before the
// holder is named: the session of a process that has just ended (killed,
// or stopped a moment ago) keeps the lock until its backend has noticed
// the closed connection, which takes a moment on a loaded server.
const ownerRetry = 3 * time.Second

func tryOwnerLock(ctx context.Context, conn *pgx.Conn, key int64) (bool, error) {
	deadline := time.Now().Add(ownerRetry)
	for {
		var got bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&got); err != nil || got {
			return got, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// watch closes lost when the owner's session stops answering.
func (o *Owner) watch() {
	defer close(o.done)
	t := time.NewTicker(ownerCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-t.C:
		}
		o.mu.Lock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := o.conn.Ping(ctx)
		cancel()
		o.mu.Unlock()
		if err != nil {
			close(o.lost)
			return
		}
	}
}

// Lost is closed when the ownership is lost (see Owner).
func (o *Owner) Lost() <-chan struct{} { return o.lost }

// name is the application_name of the owner's session (PostgreSQL keeps 63 bytes).
func (o *Owner) name(listen string) string {
	n := fmt.Sprintf("ingot pid %d", o.pid)
	if listen != "" {
		n += " serving " + listen
	}
	return n
}

// SetListen records where the owner serves, for a refused process's message.
func (o *Owner) SetListen(ctx context.Context, listen string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, err := o.conn.Exec(ctx, "SELECT set_config('application_name', $1, false)", o.name(listen)); err != nil {
		return fmt.Errorf("postgres: owner: %w", err)
	}
	return nil
}

// Release gives the ownership up (closing its session). Safe to call more than once.
func (o *Owner) Release() error {
	var err error
	o.once.Do(func() {
		close(o.stop)
		<-o.done
		o.mu.Lock()
		defer o.mu.Unlock()
		// Unlock before closing: Close does not wait for the backend to
		// end, so the lock would outlive this process for a moment and a
		// restarted ingot could find it still held.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = o.conn.Exec(ctx, "SELECT pg_advisory_unlock_all()")
		err = o.conn.Close(ctx)
	})
	return err
}
