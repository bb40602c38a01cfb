// Package poll waits for a condition that nothing signals: a test looks
// again, a little less often each time, until the condition holds or its
// time is up, and then says what it saw last.
//
// Wait on a signal (a channel, a process exit) where the code offers one;
// poll only what can be observed from outside.
package poll

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// The backoff between looks: short at first, so a quick condition costs
// little, then capped, so a slow one does not load what it reads.
const (
	firstDelay = 5 * time.Millisecond
	maxDelay   = 50 * time.Millisecond
)

// ErrTimeout is what Wait returns when the condition did not hold in time.
var ErrTimeout = errors.New("condition not met")

// Until calls cond until it reports done; once timeout has passed, it fails
// the test with what and the state cond reported last. cond runs on the
// test's goroutine, so it may fail the test itself (an outcome that must
// never be seen). The timeout alone bounds it, so it serves in a Cleanup
// too (where t.Context is already canceled).
func Until(t testing.TB, timeout time.Duration, what string, cond func() (done bool, state string)) {
	t.Helper()
	err := Wait(context.Background(), timeout, func() (bool, string, error) {
		done, state := cond()
		return done, state, nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Wait calls cond until it reports done or an error, and returns nil, that
// error, ctx's error, or ErrTimeout (with the last state and the timeout)
// once timeout has passed. cond is called at least once.
func Wait(ctx context.Context, timeout time.Duration, cond func() (done bool, state string, err error)) error {
	return WaitPaced(ctx, timeout, maxDelay, cond)
}

// WaitPaced is Wait whose looks, once the backoff has grown, come pace
// apart: for the waits that many tests run at once on one shared service.
func WaitPaced(ctx context.Context, timeout, pace time.Duration, cond func() (done bool, state string, err error)) error {
	deadline := time.Now().Add(timeout)
	delay := min(firstDelay, pace)
	for {
		done, state, err := cond()
		if err != nil || done {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			if state == "" {
				return fmt.Errorf("%w within %s", ErrTimeout, timeout)
			}
			return fmt.Errorf("%w within %s; last seen: %s", ErrTimeout, timeout, state)
		}
		timer := time.NewTimer(min(delay, left))
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("waiting (last seen: %s): %w", state, ctx.Err())
		case <-timer.C:
		}
		delay = min(2*delay, pace)
	}
}
