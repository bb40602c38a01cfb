package store

import (
	"context"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// Notice is one notification for the message bus, written to the outbox in
// the transaction of the change that causes it (docs/DESIGN.md §2.13): a
// change that commits has its notices, one that rolls back has none.
type Notice struct {
	// Seq orders the outbox (assigned by the store at insert).
	Seq int64
	// MessageID is the message's stable id (consumers dedupe on it: the
	// publisher delivers at least once).
	MessageID string
	EventType string
	// Priority is oslo.messaging's (INFO, ERROR): the routing key's suffix.
	Priority string
	ServerID string
	// Body is the message as published (oslo.messaging's inner message).
	Body      []byte
	CreatedAt time.Time
}

// Notifier turns one change of a server into its notices: old is the
// record before the write (nil for a create), new the record written. It
// is pure (no I/O) and runs inside the write's transaction, which may run
// it again on a retry.
type Notifier func(old, new *lifecycle.Server) []Notice

// Outbox is the queue of notices a store keeps once given a Notifier
// (NoticeSetter); implemented by both SQL stores.
type Outbox interface {
	// SetNotifier makes every write that changes a server (its create,
	// the delete request, the API's updates, SaveServer and SaveServers)
	// write n's notices in its own transaction. Call before serving; nil
	// (the default) writes none and reads nothing more.
	SetNotifier(n Notifier)
	// ClaimOutbox makes holder the outbox's one drainer until ttl from now
	// if no other holder's claim is unexpired; a holder renews its own.
	// Reports whether holder holds it.
	ClaimOutbox(ctx context.Context, holder string, ttl time.Duration) (bool, error)
	// ReleaseOutbox gives up holder's claim (no-op when not held).
	ReleaseOutbox(ctx context.Context, holder string) error
	// PendingNotices returns the oldest notices, by Seq, at most limit.
	PendingNotices(ctx context.Context, limit int) ([]Notice, error)
	// DeleteNotices removes published notices. Idempotent.
	DeleteNotices(ctx context.Context, seqs []int64) error
	// OutboxDepth counts the notices not yet published.
	OutboxDepth(ctx context.Context) (int, error)
}
