package storetest

import (
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
)

// testAdminRevision: every kind of write to the services, the aggregates,
// their hosts and the flavors moves the admin revision; a read does not.
func testAdminRevision(t *testing.T, st store.Store) {
	rev := func() int64 {
		t.Helper()
		r, err := st.AdminRevision(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	last := rev()
	moved := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if r := rev(); r == last {
			t.Errorf("%s left the admin revision at %d", what, r)
		} else {
			last = r
		}
	}
	sv, err := st.RegisterService(ctx(t), "h1", store.BinaryCompute, T0)
	moved("register", err)
	_, err = st.RegisterService(ctx(t), "h1", store.BinaryCompute, T0.Add(time.Second))
	moved("re-register", err)
	moved("heartbeat", st.Heartbeat(ctx(t), "h1", T0.Add(time.Minute)))
	dis := true
	_, err = st.UpdateService(ctx(t), sv.UUID, store.ServiceUpdate{Disabled: &dis})
	moved("update service", err)
	a, err := st.CreateAggregate(ctx(t), store.Aggregate{Name: "a1", CreatedAt: T0})
	moved("create aggregate", err)
	_, err = st.UpdateAggregate(ctx(t), a.ID, nil, map[string]*string{store.AggregateAZKey: strp("z1")}, T0)
	moved("set a zone", err)
	_, err = st.AddAggregateHost(ctx(t), a.ID, "h1", T0)
	moved("add host", err)
	_, err = st.RemoveAggregateHost(ctx(t), a.ID, "h1", T0)
	moved("remove host", err)
	moved("delete aggregate", st.DeleteAggregate(ctx(t), a.ID))
	moved("delete service", st.DeleteService(ctx(t), sv.UUID))
	moved("create flavor", st.CreateFlavor(ctx(t), store.Flavor{ID: "f1", Name: "f1", VCPUs: 1, RAMMB: 1, DiskGB: 1}))
	_, err = st.UpdateFlavor(ctx(t), "f1", func(f *store.Flavor) error {
		f.ExtraSpecs = map[string]string{"k": "v"}
		return nil
	})
	moved("set an extra spec", err)
	moved("seed flavors", st.SeedFlavors(ctx(t), []store.Flavor{{ID: "f2", Name: "f2", VCPUs: 1, RAMMB: 1, DiskGB: 1}}))
	moved("delete flavor", st.DeleteFlavor(ctx(t), "f1"))
	if _, err := st.ListServices(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ListAggregates(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ListFlavors(ctx(t), ""); err != nil {
		t.Fatal(err)
	}
	if r := rev(); r != last {
		t.Errorf("reads moved the admin revision from %d to %d", last, r)
	}
}
