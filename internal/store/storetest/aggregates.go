package storetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
)

// testAggregates: create, unique names, metadata merge, hosts, delete only
// when empty, list with hosts.
func testAggregates(t *testing.T, st store.Store) {
	a, err := st.CreateAggregate(ctx(t), store.Aggregate{Name: "a1", Metadata: map[string]string{store.AggregateAZKey: "z1"}, CreatedAt: T0})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == 0 || a.UUID == "" || a.UpdatedAt != nil || len(a.Hosts) != 0 || a.Hosts == nil || !a.CreatedAt.Equal(T0) ||
		a.Metadata[store.AggregateAZKey] != "z1" {
		t.Fatalf("created %+v", a)
	}
	if _, err := st.CreateAggregate(ctx(t), store.Aggregate{Name: "a1", CreatedAt: T0}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate name: %v", err)
	}
	b, err := st.CreateAggregate(ctx(t), store.Aggregate{Name: "a2", CreatedAt: T0})
	if err != nil {
		t.Fatal(err)
	}
	if b.ID <= a.ID || b.Metadata == nil {
		t.Fatalf("second %+v after %d", b, a.ID)
	}
	if _, err := st.GetAggregate(ctx(t), -1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	t1 := T0.Add(time.Minute)
	if _, err := st.UpdateAggregate(ctx(t), b.ID, strp("a1"), nil, t1); !errors.Is(err, store.ErrExists) {
		t.Fatalf("rename onto a taken name: %v", err)
	}
	if _, err := st.UpdateAggregate(ctx(t), 9999, strp("x"), nil, t1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update unknown: %v", err)
	}
	b, err = st.UpdateAggregate(ctx(t), b.ID, strp("b"), map[string]*string{"k": strp("v"), "gone": nil}, t1)
	if err != nil {
		t.Fatal(err)
	}
	b, err = st.UpdateAggregate(ctx(t), b.ID, nil, map[string]*string{"k2": strp("v2")}, t1)
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "b" || !reflect.DeepEqual(b.Metadata, map[string]string{"k": "v", "k2": "v2"}) || b.UpdatedAt == nil ||
		!b.UpdatedAt.Equal(t1) {
		t.Fatalf("updated %+v", b)
	}
	if b, err = st.UpdateAggregate(ctx(t), b.ID, nil, map[string]*string{"k": nil}, t1); err != nil ||
		!reflect.DeepEqual(b.Metadata, map[string]string{"k2": "v2"}) {
		t.Fatalf("remove a key: %+v %v", b.Metadata, err)
	}

	for _, h := range []string{"h2", "h1"} {
		if a, err = st.AddAggregateHost(ctx(t), a.ID, h, t1); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(a.Hosts, []string{"h1", "h2"}) || a.UpdatedAt == nil {
		t.Fatalf("hosts %+v", a)
	}
	if _, err := st.AddAggregateHost(ctx(t), a.ID, "h1", t1); !errors.Is(err, store.ErrExists) {
		t.Fatalf("host twice: %v", err)
	}
	if _, err := st.AddAggregateHost(ctx(t), 9999, "h1", t1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("host into unknown: %v", err)
	}
	if _, err := st.AddAggregateHost(ctx(t), b.ID, "h1", t1); err != nil {
		t.Fatalf("a host in two aggregates: %v", err)
	}
	if _, err := st.RemoveAggregateHost(ctx(t), a.ID, "h3", t1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("remove a host not in it: %v", err)
	}
	if _, err := st.RemoveAggregateHost(ctx(t), 9999, "h1", t1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("remove from unknown: %v", err)
	}
	if err := st.DeleteAggregate(ctx(t), a.ID); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("delete with hosts: %v", err)
	}
	all, err := st.ListAggregates(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ID != a.ID || !reflect.DeepEqual(all[0].Hosts, []string{"h1", "h2"}) ||
		!reflect.DeepEqual(all[1].Hosts, []string{"h1"}) || all[1].Name != "b" {
		t.Fatalf("list %+v", all)
	}
	for _, h := range []string{"h1", "h2"} {
		if a, err = st.RemoveAggregateHost(ctx(t), a.ID, h, t1); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.Hosts) != 0 || a.Hosts == nil {
		t.Fatalf("emptied %+v", a)
	}
	if err := st.DeleteAggregate(ctx(t), a.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteAggregate(ctx(t), a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	if _, err := st.CreateAggregate(ctx(t), store.Aggregate{Name: "a1", CreatedAt: T0}); err != nil {
		t.Fatalf("a deleted aggregate's name is free again: %v", err)
	}
}

// testIDsNotReused: the id of a deleted aggregate or service is not handed
// out again, even when it was the highest: a client that deletes by id a
// second time (a cleanup ignoring 404) must find nothing, not a newer one.
func testIDsNotReused(t *testing.T, st store.Store) {
	a, err := st.CreateAggregate(ctx(t), store.Aggregate{Name: "first", CreatedAt: T0})
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.CreateAggregate(ctx(t), store.Aggregate{Name: "second", CreatedAt: T0})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteAggregate(ctx(t), b.ID); err != nil {
		t.Fatal(err)
	}
	c, err := st.CreateAggregate(ctx(t), store.Aggregate{Name: "third", CreatedAt: T0})
	if err != nil {
		t.Fatal(err)
	}
	if c.ID == a.ID || c.ID == b.ID {
		t.Fatalf("aggregate ids %d, %d (deleted), then %d", a.ID, b.ID, c.ID)
	}

	s1, err := st.RegisterService(ctx(t), "h1", store.BinaryCompute, T0)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := st.RegisterService(ctx(t), "h2", store.BinaryCompute, T0)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteService(ctx(t), s2.UUID); err != nil {
		t.Fatal(err)
	}
	s3, err := st.RegisterService(ctx(t), "h3", store.BinaryCompute, T0)
	if err != nil {
		t.Fatal(err)
	}
	if s3.ID == s1.ID || s3.ID == s2.ID {
		t.Fatalf("service ids %d, %d (deleted), then %d", s1.ID, s2.ID, s3.ID)
	}
}
