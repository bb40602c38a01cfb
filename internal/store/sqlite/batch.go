package sqlite

import (
	"context"
	"fmt"
)

// Joined writes. The one writer connection runs one transaction at a
// time, and a commit costs as much as a small write: the writes that
// arrive while one is under way (the API's creates, the reconciler's
// port allocations and bindings, its saves) share the next transaction,
// each in a savepoint of its own, so a write that fails (a conflict, a
// fence, a constraint) is undone alone. Each write still returns only
// once its transaction is committed, and a failed commit fails every
// write it carried. Cancellation does not reach a statement under way
// (txn strips it: SQLite's interrupt would roll the whole transaction
// back, the others' writes with it); a write whose context is done before
// its turn is not run.

// writeJob is one write waiting for a transaction.
type writeJob struct {
	ctx context.Context
	fn  func(tx txn) error
	err error
}

// write runs fn in a transaction on the writer connection, alone when
// none is under way, else with the writes queued meanwhile. fn must use
// only tx. A fence in ctx (store.WithFence) is checked first, in the same
// transaction.
func (s *Store) write(ctx context.Context, fn func(tx txn) error) error {
	j := &writeJob{ctx: ctx, fn: fn}
	s.writes.Do(j)
	return j.err
}

// runWrites is the Joiner's batch.
func (s *Store) runWrites(jobs []*writeJob) {
	if len(jobs) == 1 {
		jobs[0].err = s.writeAlone(jobs[0].ctx, jobs[0].fn)
		return
	}
	s.joined.Add(int64(len(jobs) - 1))
	ctx := context.WithoutCancel(jobs[0].ctx)
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		failAll(jobs, fmt.Errorf("sqlite: begin: %w", err))
		return
	}
	t := txn{Tx: tx, st: s}
	for i, j := range jobs {
		if j.err = j.ctx.Err(); j.err != nil {
			continue
		}
		if err := s.inSavepoint(ctx, t, j); err != nil {
			// The transaction is gone (SQLite rolls it back on a full disk
			// or an I/O error): nothing of the batch is written.
			_ = tx.Rollback()
			failAll(jobs[:i], err)
			for _, rest := range jobs[i:] {
				rest.err = err
			}
			return
		}
	}
	if err := tx.Commit(); err != nil {
		failAll(jobs, fmt.Errorf("sqlite: commit: %w", err))
	}
}

// inSavepoint runs j (its fence first) in a savepoint of t, undone if j
// fails. The error is t's: the transaction can no longer be used.
func (s *Store) inSavepoint(ctx context.Context, t txn, j *writeJob) error {
	if _, err := t.ExecContext(ctx, "SAVEPOINT write_one"); err != nil {
		return fmt.Errorf("sqlite: savepoint: %w", err)
	}
	if j.err = s.checkFence(j.ctx, t); j.err == nil {
		j.err = j.fn(t)
	}
	if j.err != nil {
		if _, err := t.ExecContext(ctx, "ROLLBACK TO SAVEPOINT write_one"); err != nil {
			return fmt.Errorf("sqlite: rollback to savepoint: %w", err)
		}
	}
	if _, err := t.ExecContext(ctx, "RELEASE SAVEPOINT write_one"); err != nil {
		return fmt.Errorf("sqlite: release savepoint: %w", err)
	}
	return nil
}

// failAll gives err to each job that had succeeded: its write is lost
// with the transaction (a job that failed on its own wrote nothing).
func failAll(jobs []*writeJob, err error) {
	for _, j := range jobs {
		if j.err == nil {
			j.err = err
		}
	}
}

// writeAlone runs fn in a transaction of its own.
func (s *Store) writeAlone(ctx context.Context, fn func(tx txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tx, err := s.w.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	t := txn{Tx: tx, st: s}
	if err := s.checkFence(ctx, t); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := fn(t); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	return nil
}
