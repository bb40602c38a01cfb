package storetest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
)

func samePort(a, b store.Port) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return false
	}
	a.CreatedAt, b.CreatedAt = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

func requirePorts(t *testing.T, what string, got, want []store.Port) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %+v, want %+v", what, got, want)
	}
	for i := range got {
		if !samePort(got[i], want[i]) {
			t.Fatalf("%s: %+v, want %+v", what, got, want)
		}
	}
}

func testPorts(t *testing.T, st store.Store) {
	for _, id := range []string{"s1", "s2", "s3"} {
		mustCreate(t, st, MinimalServer(id, T0))
	}
	p1 := store.Port{ID: "port-1", ServerID: "s1", NetworkID: "net-a", IP: "10.0.0.2", MAC: "fa:16:3e:00:00:01",
		CreatedAt: T0.Add(time.Nanosecond)}
	p2 := store.Port{ID: "port-2", ServerID: "s1", NetworkID: "net-b", IP: "10.1.0.2", MAC: "fa:16:3e:00:00:02",
		VIFNode: "node-1", CreatedAt: T0.Add(2 * time.Nanosecond)}
	p3 := store.Port{ID: "port-3", ServerID: "s2", NetworkID: "net-a", IP: "10.0.0.3", MAC: "fa:16:3e:00:00:03",
		CreatedAt: T0.Add(3 * time.Nanosecond)}
	for _, p := range []store.Port{p1, p2, p3} {
		if err := st.CreatePort(ctx(t), p); err != nil {
			t.Fatalf("CreatePort(%s): %v", p.ID, err)
		}
	}

	got, err := st.GetPort(ctx(t), "port-2")
	if err != nil || !samePort(got, p2) {
		t.Fatalf("GetPort = %+v, %v; want %+v", got, err, p2)
	}
	_, err = st.GetPort(ctx(t), "nope")
	wantErr(t, "GetPort unknown", err, store.ErrNotFound)

	ports, err := st.Ports(ctx(t), "s1")
	if err != nil {
		t.Fatal(err)
	}
	requirePorts(t, "Ports(s1)", ports, []store.Port{p1, p2})
	if ports, err := st.Ports(ctx(t), "s3"); err != nil || len(ports) != 0 {
		t.Fatalf("Ports(s3) = %v, %v; want none", ports, err)
	}

	on, err := st.PortsOn(ctx(t), []string{"s1", "s2", "s3", "unknown"})
	if err != nil {
		t.Fatal(err)
	}
	if len(on["s3"]) != 0 || len(on["unknown"]) != 0 {
		t.Fatalf("PortsOn lists ports of servers that have none: %+v", on)
	}
	requirePorts(t, "PortsOn[s1]", on["s1"], []store.Port{p1, p2})
	requirePorts(t, "PortsOn[s2]", on["s2"], []store.Port{p3})
	if on, err := st.PortsOn(ctx(t), nil); err != nil || len(on) != 0 {
		t.Fatalf("PortsOn(nil) = %v, %v", on, err)
	}

	// The address fence, and one port per server per network.
	taken := store.Port{ID: "port-4", ServerID: "s3", NetworkID: "net-a", IP: "10.0.0.2", MAC: "fa:16:3e:00:00:04", CreatedAt: T0}
	wantErr(t, "CreatePort on a taken address", st.CreatePort(ctx(t), taken), store.ErrAddressInUse)
	sameIPOtherNet := store.Port{ID: "port-5", ServerID: "s3", NetworkID: "net-b", IP: "10.0.0.2", MAC: "fa:16:3e:00:00:05", CreatedAt: T0}
	if err := st.CreatePort(ctx(t), sameIPOtherNet); err != nil {
		t.Fatalf("same address on another network: %v", err)
	}
	dupID := p3
	dupID.NetworkID, dupID.IP, dupID.ServerID = "net-c", "10.2.0.2", "s3"
	wantErr(t, "CreatePort with a duplicate id", st.CreatePort(ctx(t), dupID), store.ErrExists)
	second := store.Port{ID: "port-6", ServerID: "s1", NetworkID: "net-a", IP: "10.0.0.9", MAC: "fa:16:3e:00:00:06", CreatedAt: T0}
	wantErr(t, "second port of s1 on net-a", st.CreatePort(ctx(t), second), store.ErrExists)
	// An attached interface is a second port on the network in its own slot.
	slotted := store.Port{ID: "port-7", ServerID: "s1", NetworkID: "net-a", IP: "10.0.0.7", MAC: "fa:16:3e:00:00:07", CreatedAt: T0.Add(4 * time.Nanosecond), Slot: "port-7"}
	if err := st.CreatePort(ctx(t), slotted); err != nil {
		t.Fatalf("a second port of s1 on net-a in its own slot: %v", err)
	}
	if got, err := st.GetPort(ctx(t), "port-7"); err != nil || !samePort(got, slotted) {
		t.Fatalf("GetPort(port-7) = %+v, %v; want %+v", got, err, slotted)
	}
	again := slotted
	again.ID, again.IP = "port-8", "10.0.0.8"
	wantErr(t, "a second port in one slot", st.CreatePort(ctx(t), again), store.ErrExists)
	if err := st.DeletePort(ctx(t), "port-7"); err != nil {
		t.Fatal(err)
	}

	used, err := st.UsedAddresses(ctx(t), "net-a")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(used)
	if !slices.Equal(used, []string{"10.0.0.2", "10.0.0.3"}) {
		t.Fatalf("UsedAddresses(net-a) = %v", used)
	}

	// VIF bookkeeping.
	if err := st.SetPortVIF(ctx(t), "port-1", "node-9"); err != nil {
		t.Fatal(err)
	}
	if err := st.SetPortVIF(ctx(t), "port-1", "node-9"); err != nil {
		t.Fatalf("SetPortVIF repeated: %v", err)
	}
	if got, _ := st.GetPort(ctx(t), "port-1"); got.VIFNode != "node-9" {
		t.Fatalf("VIFNode = %q after SetPortVIF", got.VIFNode)
	}
	if err := st.SetPortVIF(ctx(t), "port-1", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetPort(ctx(t), "port-1"); got.VIFNode != "" {
		t.Fatalf("VIFNode = %q after detach", got.VIFNode)
	}
	wantErr(t, "SetPortVIF unknown", st.SetPortVIF(ctx(t), "nope", "n"), store.ErrNotFound)

	// Bindings: VIF node, MAC and the Ironic port or portgroup in one write.
	bond := store.Binding{PortgroupUUID: "pg-1", BondMode: "802.3ad",
		BondProperties: map[string]any{"xmit_hash_policy": "layer3+4", "miimon": float64(100)},
		Members:        []store.BondMember{{PortUUID: "ip-1", MAC: "52:54:00:00:00:01"}, {PortUUID: "ip-2", MAC: "52:54:00:00:00:02"}}}
	for range 2 { // idempotent
		if err := st.BindPort(ctx(t), "port-2", "node-3", "52:54:00:00:00:01", bond); err != nil {
			t.Fatalf("BindPort: %v", err)
		}
	}
	want2 := p2
	want2.VIFNode, want2.MAC, want2.Binding = "node-3", "52:54:00:00:00:01", bond
	if got, err := st.GetPort(ctx(t), "port-2"); err != nil || !samePort(got, want2) {
		t.Fatalf("GetPort after BindPort = %+v, %v; want %+v", got, err, want2)
	}
	if on, err := st.PortsOn(ctx(t), []string{"s1"}); err != nil || len(on["s1"]) != 2 || !samePort(on["s1"][1], want2) {
		t.Fatalf("PortsOn after BindPort = %+v, %v", on, err)
	}
	single := store.Binding{PortUUID: "ip-9"}
	if err := st.BindPort(ctx(t), "port-2", "node-4", "52:54:00:00:00:09", single); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetPort(ctx(t), "port-2"); got.Binding.Bond() || got.Binding.PortUUID != "ip-9" || got.VIFNode != "node-4" || got.Binding.Members != nil {
		t.Fatalf("rebinding to a single port left %+v", got)
	}
	if err := st.BindPort(ctx(t), "port-2", "", p2.MAC, store.Binding{}); err != nil {
		t.Fatal(err)
	}
	want2.VIFNode, want2.MAC, want2.Binding = "", p2.MAC, store.Binding{}
	if got, _ := st.GetPort(ctx(t), "port-2"); !samePort(got, want2) || got.Binding.Bound() {
		t.Fatalf("unbound port = %+v, want %+v", got, want2)
	}
	wantErr(t, "BindPort unknown", st.BindPort(ctx(t), "nope", "n", "m", single), store.ErrNotFound)

	// Delete frees the address; idempotent.
	for range 2 {
		if err := st.DeletePort(ctx(t), "port-1"); err != nil {
			t.Fatalf("DeletePort: %v", err)
		}
	}
	if err := st.DeletePort(ctx(t), "never-existed"); err != nil {
		t.Fatalf("DeletePort unknown: %v", err)
	}
	_, err = st.GetPort(ctx(t), "port-1")
	wantErr(t, "GetPort after delete", err, store.ErrNotFound)
	if err := st.CreatePort(ctx(t), taken); err != nil {
		t.Fatalf("address not reusable after DeletePort: %v", err)
	}
}

// testPortsByCreation: a server's ports come by creation, then id, in
// Ports and PortsOn alike, whatever their networks, slots or the order of
// the writes (an index on server, network and slot would give another).
func testPortsByCreation(t *testing.T, st store.Store) {
	for _, id := range []string{"s1", "s2"} {
		mustCreate(t, st, MinimalServer(id, T0))
	}
	at := func(n int) time.Time { return T0.Add(time.Duration(n) * time.Microsecond) }
	late := store.Port{ID: "port-a", ServerID: "s1", NetworkID: "net-0", IP: "10.9.0.2", MAC: "fa:16:3e:00:01:01", CreatedAt: at(3)}
	early := store.Port{ID: "port-z", ServerID: "s1", NetworkID: "net-9", IP: "10.9.0.3", MAC: "fa:16:3e:00:01:02", CreatedAt: at(1)}
	tieB := store.Port{ID: "port-m2", ServerID: "s1", NetworkID: "net-0", IP: "10.9.0.4", MAC: "fa:16:3e:00:01:03", CreatedAt: at(2), Slot: "port-m2"}
	tieA := store.Port{ID: "port-m1", ServerID: "s1", NetworkID: "net-5", IP: "10.9.0.5", MAC: "fa:16:3e:00:01:04", CreatedAt: at(2)}
	other := store.Port{ID: "port-0", ServerID: "s2", NetworkID: "net-0", IP: "10.9.0.6", MAC: "fa:16:3e:00:01:05", CreatedAt: at(0)}
	for _, p := range []store.Port{late, tieB, other, early, tieA} {
		if err := st.CreatePort(ctx(t), p); err != nil {
			t.Fatalf("CreatePort(%s): %v", p.ID, err)
		}
	}
	want := []store.Port{early, tieA, tieB, late}
	ports, err := st.Ports(ctx(t), "s1")
	if err != nil {
		t.Fatal(err)
	}
	requirePorts(t, "Ports(s1)", ports, want)
	on, err := st.PortsOn(ctx(t), []string{"s2", "s1"})
	if err != nil {
		t.Fatal(err)
	}
	requirePorts(t, "PortsOn[s1]", on["s1"], want)
	requirePorts(t, "PortsOn[s2]", on["s2"], []store.Port{other})
}
