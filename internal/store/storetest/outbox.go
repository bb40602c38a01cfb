package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// describe is a notifier that tells the change it was given: the server,
// and name/phase/desired before and after ("-" for a create).
func describe(old, new *lifecycle.Server) []store.Notice {
	from := "-"
	if old != nil {
		from = fmt.Sprintf("%s/%s/%s", old.Name, old.Phase, old.Desired)
	}
	d := fmt.Sprintf("%s %s -> %s/%s/%s v%d", new.ID, from, new.Name, new.Phase, new.Desired, new.Version)
	return []store.Notice{{MessageID: fmt.Sprintf("m-%s-v%d", new.ID, new.Version), EventType: d, Priority: "INFO",
		ServerID: new.ID, Body: []byte(`{"d":"` + d + `"}`), CreatedAt: T0}}
}

// testOutbox: every write of a server that commits writes its notices in
// its transaction, from the record before and after it; a write that
// fails or rolls back writes none.
func testOutbox(t *testing.T, st store.Store) {
	ob, ok := st.(store.Outbox)
	if !ok {
		t.Skip("store keeps no outbox")
	}
	mustCreate(t, st, MinimalServer("s0", T0)) // before the notifier: none
	ob.SetNotifier(describe)

	mustCreate(t, st, MinimalServer("s1", T0))
	a, b := mustGet(t, st, "s1"), mustGet(t, st, "s1")
	a.Phase = lifecycle.PhaseReserving
	mustSave(t, st, a)
	b.Phase = lifecycle.PhaseError
	wantErr(t, "stale save", st.SaveServer(ctx(t), b), store.ErrConflict)

	boom := errors.New("boom")
	_, err := st.UpdateServer(ctx(t), "s1", nil, func(s *lifecycle.Server) error { s.Name = "never"; return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("UpdateServer: %v, want boom", err)
	}
	if _, err := st.UpdateServer(ctx(t), "s1", nil, func(s *lifecycle.Server) error { s.Name = "renamed"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := st.RequestDelete(ctx(t), "s1", "req-del", T0); err != nil {
		t.Fatal(err)
	}
	if err := st.RequestDelete(ctx(t), "s1", "req-del", T0); err != nil { // a repeat changes nothing
		t.Fatal(err)
	}
	// A create refused (a duplicate id) writes nothing.
	if err := st.CreateServer(ctx(t), MinimalServer("s1", T0)); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate create: %v", err)
	}
	// Each notice sees the version its write stored.
	want := []string{
		"s1 - -> srv-s1/pending/active v1",
		"s1 srv-s1/pending/active -> srv-s1/reserving/active v2",
		"s1 srv-s1/reserving/active -> renamed/reserving/active v3",
		"s1 renamed/reserving/active -> renamed/reserving/deleted v4",
	}

	if bs, ok := st.(store.BatchSaver); ok {
		mustCreate(t, st, MinimalServer("s2", T0))
		fresh, stale := mustGet(t, st, "s2"), mustGet(t, st, "s0")
		stale.Version = 99
		fresh.Phase, stale.Phase = lifecycle.PhaseReserving, lifecycle.PhaseReserving
		errs := bs.SaveServers(ctx(t), []store.Save{{Server: fresh}, {Server: stale}})
		if errs[0] != nil || !errors.Is(errs[1], store.ErrConflict) {
			t.Fatalf("SaveServers: %v, want nil and a conflict", errs)
		}
		want = append(want, "s2 - -> srv-s2/pending/active v1", "s2 srv-s2/pending/active -> srv-s2/reserving/active v2")
	}

	got := pending(t, ob)
	if !slices.Equal(got, want) {
		t.Fatalf("outbox:\n%s\nwant:\n%s", join(got), join(want))
	}
	if n, err := ob.OutboxDepth(ctx(t)); err != nil || n != len(want) {
		t.Errorf("OutboxDepth = %d, %v; want %d", n, err, len(want))
	}

	// Draining: the oldest first, deleted once published.
	first, err := ob.PendingNotices(ctx(t), 2)
	if err != nil || len(first) != 2 {
		t.Fatalf("PendingNotices(2) = %v, %v", first, err)
	}
	if first[0].MessageID != "m-s1-v1" || string(first[0].Body) != `{"d":"`+want[0]+`"}` || !first[0].CreatedAt.Equal(T0) ||
		first[0].Priority != "INFO" || first[0].ServerID != "s1" || first[0].Seq >= first[1].Seq {
		t.Errorf("first notice read back as %+v", first[0])
	}
	if err := ob.DeleteNotices(ctx(t), []int64{first[0].Seq, first[1].Seq}); err != nil {
		t.Fatal(err)
	}
	if err := ob.DeleteNotices(ctx(t), []int64{first[0].Seq}); err != nil { // idempotent
		t.Fatal(err)
	}
	if got := pending(t, ob); !slices.Equal(got, want[2:]) {
		t.Errorf("after the delete:\n%s\nwant:\n%s", join(got), join(want[2:]))
	}

	// Without a notifier nothing more is written.
	ob.SetNotifier(nil)
	s := mustGet(t, st, "s1")
	s.Phase = lifecycle.PhaseDeleting
	mustSave(t, st, s)
	if got := pending(t, ob); len(got) != len(want)-2 {
		t.Errorf("a save without a notifier wrote notices: %s", join(got))
	}
}

// testOutboxClaim: one drainer at a time; a claim expires or is released.
func testOutboxClaim(t *testing.T, st store.Store) {
	ob, ok := st.(store.Outbox)
	if !ok {
		t.Skip("store keeps no outbox")
	}
	claim := func(holder string, ttl time.Duration, want bool) {
		t.Helper()
		got, err := ob.ClaimOutbox(ctx(t), holder, ttl)
		if err != nil || got != want {
			t.Fatalf("ClaimOutbox(%s) = %v, %v; want %v", holder, got, err, want)
		}
	}
	claim("a", time.Minute, true)
	claim("b", time.Minute, false)
	claim("a", time.Minute, true)                         // renewal
	if err := ob.ReleaseOutbox(ctx(t), "b"); err != nil { // not b's: no-op
		t.Fatal(err)
	}
	claim("b", time.Minute, false)
	if err := ob.ReleaseOutbox(ctx(t), "a"); err != nil {
		t.Fatal(err)
	}
	claim("b", -time.Second, true) // expired at once
	claim("a", time.Minute, true)
	claim("b", time.Minute, false)
}

func pending(t *testing.T, ob store.Outbox) []string {
	t.Helper()
	ns, err := ob.PendingNotices(ctx(t), 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, n := range ns {
		out = append(out, n.EventType)
	}
	return out
}

func join(ss []string) string {
	out := ""
	for _, s := range ss {
		out += "  " + s + "\n"
	}
	return out
}
