package storetest

import (
	"errors"
	"testing"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// testQuotaCreateMany: CreateServersWithin creates as many of a multiple
// create as the quota allows from minCount up, all in one transaction, and
// nothing when not even minCount fit (Nova's min_count/max_count).
func testQuotaCreateMany(t *testing.T, any_ store.Store) {
	st, ok := any_.(interface {
		store.Store
		store.MultiCreator
	})
	if !ok {
		t.Skip("this store has no CreateServersWithin: the API refuses max_count > 1 on it")
	}
	defaults := store.Limits{store.ResInstances: 5, store.ResCores: -1, store.ResRAM: -1}
	batch := func(prefix string, n int) []*lifecycle.Server {
		out := make([]*lifecycle.Server, n)
		for i := range out {
			out[i] = projectServer(prefix+string(rune('0'+i)), "m", 2, 10, "gold")
		}
		return out
	}
	exists := func(id string) bool {
		_, err := st.GetServer(ctx(t), id)
		return err == nil
	}
	n, err := st.CreateServersWithin(ctx(t), batch("a", 3), 3, defaults)
	if err != nil || n != 3 || !exists("a0") || !exists("a2") {
		t.Fatalf("3 of 3: n=%d err=%v", n, err)
	}
	// 2 left: min 3 fails whole, with Nova's count of what was asked.
	n, err = st.CreateServersWithin(ctx(t), batch("b", 4), 3, defaults)
	var qe *store.QuotaExceededError
	if !errors.As(err, &qe) || n != 0 || qe.Resource != store.ResInstances || qe.Requested != 3 || qe.Used != 3 || qe.Limit != 5 {
		t.Fatalf("min 3 with 2 left: n=%d err=%v (%+v)", n, err, qe)
	}
	if exists("b0") || exists("b1") {
		t.Fatal("a refused multiple create wrote servers")
	}
	// min 1, max 4: the 2 that fit.
	n, err = st.CreateServersWithin(ctx(t), batch("c", 4), 1, defaults)
	if err != nil || n != 2 || !exists("c0") || !exists("c1") || exists("c2") {
		t.Fatalf("min 1 max 4 with 2 left: n=%d err=%v", n, err)
	}
	if u, err := st.Usage(ctx(t), "m"); err != nil || u.Instances != 5 || u.Cores != 10 || u.ByClass["gold"] != 5 {
		t.Fatalf("usage %+v %v", u, err)
	}
	// A duplicate id in the batch rolls back every one of it.
	if err := st.DeleteQuotas(ctx(t), "m"); err != nil {
		t.Fatal(err)
	}
	dup := batch("d", 2)
	dup[1].ID = "a0"
	if _, err := st.CreateServersWithin(ctx(t), dup, 2, store.Limits{}); !errors.Is(err, store.ErrExists) || exists("d0") {
		t.Fatalf("duplicate in a batch: %v, d0 written %v", err, exists("d0"))
	}
}
