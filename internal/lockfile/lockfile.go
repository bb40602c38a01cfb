// Package lockfile makes one process the owner of a file such as a SQLite
// database: an exclusive flock(2) on a lock file beside it. The kernel drops
// the lock when the process ends, however it ends (kill -9 included), so a
// crash never leaves a stale lock behind. The lock file records who holds it,
// for the message a second process shows when it is refused.
package lockfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Holder describes the process holding a lock.
type Holder struct {
	PID int `json:"pid"`
	// Listen is where the holder serves (e.g. http://127.0.0.1:8774), once known.
	Listen string    `json:"listen,omitempty"`
	Since  time.Time `json:"since"`
}

func (h Holder) String() string {
	parts := []string{fmt.Sprintf("pid %d", h.PID)}
	if h.Listen != "" {
		parts = append(parts, "serving "+h.Listen)
	}
	if !h.Since.IsZero() {
		parts = append(parts, "since "+h.Since.Format(time.RFC3339))
	}
	return strings.Join(parts, ", ")
}

// ErrHeld is matched (errors.Is) by the *HeldError Acquire returns when
// another process holds the lock.
var ErrHeld = errors.New("lockfile: held by another process")

// HeldError says who holds a lock. Holder is the zero value when the lock
// file names nobody yet (its holder is between locking and writing it).
type HeldError struct {
	Path   string
	Holder Holder
}

func (e *HeldError) Error() string {
	if e.Holder.PID == 0 {
		return "held by another process (lock " + e.Path + ")"
	}
	return "held by " + e.Holder.String() + " (lock " + e.Path + ")"
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Lock is a held lock.
type Lock struct {
	f      *os.File
	path   string
	holder Holder
}

// Acquire takes the lock at path (created mode 0600 if missing) for holder,
// without waiting: when another process holds it, the error is a
// *HeldError naming that process. A second Acquire of the same path in the
// same process is refused too (flock locks belong to the open file).
func Acquire(path string, holder Holder) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lockfile: %w", err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, &HeldError{Path: path, Holder: readHolder(path)}
		}
		return nil, fmt.Errorf("lockfile: lock %s: %w", path, err)
	}
	l := &Lock{f: f, path: path}
	if err := l.Update(holder); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// Path is the lock file's path.
func (l *Lock) Path() string { return l.path }

// Update rewrites the holder record (e.g. once the listen address is known).
func (l *Lock) Update(holder Holder) error {
	raw, err := json.Marshal(holder)
	if err != nil {
		return fmt.Errorf("lockfile: %w", err)
	}
	raw = append(raw, '\n')
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("lockfile: write %s: %w", l.path, err)
	}
	if _, err := l.f.WriteAt(raw, 0); err != nil {
		return fmt.Errorf("lockfile: write %s: %w", l.path, err)
	}
	l.holder = holder
	return nil
}

// Holder returns the record this lock wrote.
func (l *Lock) Holder() Holder { return l.holder }

// Release empties the record and lets go of the lock; the file stays (removing
// it would race with a process that has just opened it). Safe to call twice.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing the last descriptor drops the flock
	l.f = nil
	return err
}

// readHolder reads the record of the process holding the lock, or the zero
// Holder when there is none to read yet.
func readHolder(path string) Holder {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Holder{}
	}
	var h Holder
	if json.Unmarshal(raw, &h) != nil {
		return Holder{}
	}
	return h
}
