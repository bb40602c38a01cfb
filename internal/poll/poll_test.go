package poll

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestWaitReturnsOnceDone(t *testing.T) {
	calls := 0
	err := Wait(t.Context(), time.Minute, func() (bool, string, error) {
		calls++
		return calls == 3, "", nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("Wait: %v after %d calls, want nil after 3", err, calls)
	}
}

func TestWaitTimesOutWithTheLastState(t *testing.T) {
	calls := 0
	start := time.Now()
	err := Wait(t.Context(), 300*time.Millisecond, func() (bool, string, error) {
		calls++
		return false, "seen " + strings.Repeat("x", calls), nil
	})
	took := time.Since(start)
	if !errors.Is(err, ErrTimeout) || !strings.HasSuffix(err.Error(), "last seen: seen "+strings.Repeat("x", calls)) {
		t.Fatalf("Wait: %v, want ErrTimeout naming the last of %d states", err, calls)
	}
	if took < 300*time.Millisecond {
		t.Fatalf("gave up after %s, before its 300ms", took)
	}
	// Backoff: 5, 10, 20, 40, then 50 ms apart, so about 9 looks in 300 ms;
	// a late timer can only make fewer.
	if calls < 2 || calls > 12 {
		t.Fatalf("%d looks in 300ms, want a backoff's few", calls)
	}
}

func TestWaitPacedLooksNoMoreOftenThanItsPace(t *testing.T) {
	calls := 0
	err := WaitPaced(t.Context(), 500*time.Millisecond, 200*time.Millisecond, func() (bool, string, error) {
		calls++
		return false, "", nil
	})
	// 5, 10, 20, 40, 80, 160, then 200 ms apart: 7 looks in 500 ms.
	if !errors.Is(err, ErrTimeout) || calls < 2 || calls > 8 {
		t.Fatalf("WaitPaced: %v after %d looks in 500ms at a 200ms pace", err, calls)
	}
}

func TestWaitLooksAtLeastOnce(t *testing.T) {
	calls := 0
	if err := Wait(t.Context(), 0, func() (bool, string, error) { calls++; return true, "", nil }); err != nil || calls != 1 {
		t.Fatalf("Wait with no time: %v after %d calls, want nil after 1", err, calls)
	}
}

func TestWaitStopsOnAnError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	err := Wait(t.Context(), time.Minute, func() (bool, string, error) { calls++; return false, "", boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("Wait: %v after %d calls, want boom after 1", err, calls)
	}
}

func TestWaitStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err := Wait(ctx, time.Minute, func() (bool, string, error) { return false, "pending", nil })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "pending") {
		t.Fatalf("Wait: %v, want the context's deadline and the last state", err)
	}
}

// fatalTB records Fatalf and ends its goroutine as testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestUntilFailsTheTestNamingWhatAndTheLastState(t *testing.T) {
	tb := &fatalTB{TB: t}
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		Until(tb, 50*time.Millisecond, "ingot ready", func() (bool, string) { return false, "503 not ready" })
		returned = true
	}()
	<-done
	if returned || !strings.Contains(tb.msg, "ingot ready") || !strings.Contains(tb.msg, "last seen: 503 not ready") {
		t.Fatalf("Until: returned %v, failed with %q", returned, tb.msg)
	}
	tb = &fatalTB{TB: t}
	Until(tb, time.Minute, "at once", func() (bool, string) { return true, "" })
	if tb.msg != "" {
		t.Fatalf("Until failed a condition that held: %q", tb.msg)
	}
}

func TestUntilServesInACleanup(t *testing.T) {
	t.Run("cleanup", func(t *testing.T) {
		t.Cleanup(func() {
			calls := 0
			Until(t, time.Minute, "three looks", func() (bool, string) { calls++; return calls == 3, "" })
		})
	})
}
