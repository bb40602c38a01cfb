package storetest

import (
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
)

// testNeutronPorts: rows written before Neutron's create carry no address
// (several on one network), RecordNeutronPort fills id, address and MAC,
// and the (network, address) fence then holds as for the embedded IPAM.
func testNeutronPorts(t *testing.T, st store.Store) {
	for _, id := range []string{"s1", "s2", "s3"} {
		mustCreate(t, st, MinimalServer(id, T0))
	}
	rows := []store.Port{
		{ID: "row-1", ServerID: "s1", NetworkID: "neutron-net", CreatedAt: T0},
		{ID: "row-2", ServerID: "s2", NetworkID: "neutron-net", CreatedAt: T0.Add(time.Nanosecond), UserPort: true,
			NeutronID: "user-port"},
		{ID: "row-3", ServerID: "s3", NetworkID: "neutron-net", CreatedAt: T0.Add(2 * time.Nanosecond)},
	}
	for _, p := range rows {
		if err := st.CreatePort(ctx(t), p); err != nil {
			t.Fatalf("CreatePort(%s) without an address: %v", p.ID, err)
		}
	}
	if err := st.CreatePort(ctx(t), store.Port{ID: "row-4", ServerID: "s3", NetworkID: "other", MAC: "fa:16:3e:00:00:09"}); err == nil {
		t.Fatal("CreatePort with a MAC and no address succeeded")
	}
	got, err := st.GetPort(ctx(t), "row-2")
	if err != nil || !samePort(got, rows[1]) {
		t.Fatalf("GetPort(row-2) = %+v, %v; want %+v", got, err, rows[1])
	}
	if got.VIF() != "user-port" {
		t.Fatalf("VIF of a Neutron row = %q, want its Neutron id", got.VIF())
	}
	if err := st.RecordNeutronPort(ctx(t), "row-1", "neutron-1", "192.0.2.10", "fa:16:3e:00:00:0a"); err != nil {
		t.Fatal(err)
	}
	want := rows[0]
	want.NeutronID, want.IP, want.MAC = "neutron-1", "192.0.2.10", "fa:16:3e:00:00:0a"
	if got, err := st.GetPort(ctx(t), "row-1"); err != nil || !samePort(got, want) {
		t.Fatalf("after RecordNeutronPort: %+v, %v; want %+v", got, err, want)
	}
	wantErr(t, "RecordNeutronPort of a taken address",
		st.RecordNeutronPort(ctx(t), "row-3", "neutron-3", "192.0.2.10", "fa:16:3e:00:00:0b"), store.ErrAddressInUse)
	wantErr(t, "RecordNeutronPort of an unknown row",
		st.RecordNeutronPort(ctx(t), "nope", "n", "192.0.2.11", "fa:16:3e:00:00:0c"), store.ErrNotFound)
	if used, err := st.UsedAddresses(ctx(t), "neutron-net"); err != nil || len(used) != 1 || used[0] != "192.0.2.10" {
		t.Fatalf("UsedAddresses = %v, %v; want only the recorded address", used, err)
	}
}
