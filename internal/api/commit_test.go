package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
)

// errAway is a database gone away, as its store classifies it.
var errAway = errors.New("connection reset by peer")

// lostAnswer is a store whose creates lose their commit's answer: each
// commits (commit true) or not, and answers that its outcome is unknown.
type lostAnswer struct {
	*sqlite.Store
	commit bool
}

func (l lostAnswer) lose(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("commit: %w: %w", store.ErrCommitUnknown, errAway)
}

func (l lostAnswer) CreateServerWithin(ctx context.Context, s *lifecycle.Server, d store.Limits) error {
	if !l.commit {
		return l.lose(nil)
	}
	return l.lose(l.Store.CreateServerWithin(ctx, s, d))
}

func (l lostAnswer) CreateServersWithin(ctx context.Context, s []*lifecycle.Server, min int, d store.Limits) (int, error) {
	if !l.commit {
		return 0, l.lose(nil)
	}
	n, err := l.Store.CreateServersWithin(ctx, s, min, d)
	return n, l.lose(err)
}

func (l lostAnswer) Unavailable(err error) bool { return errors.Is(err, errAway) }

// TestCreateWhoseCommitLostItsAnswer: a create whose commit got no answer
// is read back: committed, it is the 202 it was (a 503 would have the
// client's retry make a second server); not committed, a 503 with
// Retry-After, and nothing recorded.
func TestCreateWhoseCommitLostItsAnswer(t *testing.T) {
	for _, committed := range []bool{true, false} {
		t.Run(fmt.Sprint("committed=", committed), func(t *testing.T) {
			f := newFixtureWith(t, func(c *api.Config) { c.Store = lostAnswer{Store: c.Store.(*sqlite.Store), commit: committed} })
			r := f.do("POST", "/v2.1/servers", "2.90", validCreate())
			list, err := f.store.ListServers(context.Background(), store.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case committed && (r.status != http.StatusAccepted || len(list) != 1 || obj(t, r.body, "server")["id"] != list[0].ID):
				t.Fatalf("committed: HTTP %d %s, %d servers recorded; want 202 naming the one", r.status, r.raw, len(list))
			case !committed && (r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || len(list) != 0):
				t.Fatalf("not committed: HTTP %d (Retry-After %q), %d servers recorded; want 503 and none", r.status, r.header.Get("Retry-After"), len(list))
			}
		})
	}
}
