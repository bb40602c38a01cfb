package network

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/sqlite"
	"github.com/ingot-dev/ingot/internal/store/storetest"
)

func openStore(t testing.TB) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ingot.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func createServers(t testing.TB, st store.Store, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("srv-%05d", i)
		if err := st.CreateServer(t.Context(), storetest.MinimalServer(ids[i], storetest.T0)); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

func netOf(id, cidr string) Network {
	return Network{ID: id, Name: "name-" + id, CIDR: netip.MustParsePrefix(cidr)}
}

func ip(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		in             Network
		gw, start, end string
	}{
		{in: netOf("a", "10.0.0.0/24"), gw: "10.0.0.1", start: "10.0.0.2", end: "10.0.0.254"},
		{in: netOf("b", "192.168.8.0/29"), gw: "192.168.8.1", start: "192.168.8.2", end: "192.168.8.6"},
		{in: netOf("c", "10.0.0.77/24"), gw: "10.0.0.1", start: "10.0.0.2", end: "10.0.0.254"}, // host bits ignored
		{in: netOf("d", "10.0.0.0/31"), gw: "10.0.0.0", start: "10.0.0.1", end: "10.0.0.1"},
		{in: Network{ID: "e", CIDR: netip.MustParsePrefix("10.0.0.0/24"), Gateway: ip("10.0.0.254"), RangeStart: ip("10.0.0.100")},
			gw: "10.0.0.254", start: "10.0.0.100", end: "10.0.0.254"},
	} {
		got := Defaults(tc.in)
		if got.Gateway.String() != tc.gw || got.RangeStart.String() != tc.start || got.RangeEnd.String() != tc.end {
			t.Errorf("Defaults(%v) = gw %v range %v-%v, want %s %s-%s", tc.in.CIDR, got.Gateway, got.RangeStart,
				got.RangeEnd, tc.gw, tc.start, tc.end)
		}
	}
	v6 := Network{ID: "v6", CIDR: netip.MustParsePrefix("fd00::/64")}
	if got := Defaults(v6); !reflect.DeepEqual(got, v6) {
		t.Errorf("Defaults changed an IPv6 network: %+v", got)
	}
}

var macRE = regexp.MustCompile(`^fa:16:3e(:[0-9a-f]{2}){3}$`)

func TestAllocateExhaustion(t *testing.T) {
	st := openStore(t)
	ids := createServers(t, st, 6)
	m := NewIPAM(st, Networks{netOf("n29", "10.9.0.0/29")})
	var got []string
	for _, id := range ids[:5] {
		p, err := m.Allocate(t.Context(), id, "n29")
		if err != nil {
			t.Fatalf("Allocate(%s): %v", id, err)
		}
		if _, err := uuid.Parse(p.ID); err != nil || p.ServerID != id || p.NetworkID != "n29" {
			t.Fatalf("port %+v", p)
		}
		if !macRE.MatchString(p.MAC) || p.MAC != MAC(p.ID) {
			t.Fatalf("MAC %q of port %s", p.MAC, p.ID)
		}
		got = append(got, p.IP)
	}
	want := []string{"10.9.0.2", "10.9.0.3", "10.9.0.4", "10.9.0.5", "10.9.0.6"} // lowest first; .0 .1 .7 skipped
	if !slices.Equal(got, want) {
		t.Fatalf("addresses %v, want %v", got, want)
	}
	_, err := m.Allocate(t.Context(), ids[5], "n29")
	if !errors.Is(err, ErrPoolExhausted) {
		t.Fatalf("sixth Allocate on a /29: %v, want ErrPoolExhausted", err)
	}
	if ports, _ := st.Ports(t.Context(), ids[5]); len(ports) != 0 {
		t.Fatalf("exhausted Allocate left ports %v", ports)
	}
}

func TestAllocateIdempotent(t *testing.T) {
	st := openStore(t)
	ids := createServers(t, st, 2)
	m := NewIPAM(st, Networks{netOf("net-a", "10.0.0.0/24"), netOf("net-b", "10.1.0.0/24")})
	a1, err := m.Allocate(t.Context(), ids[0], "net-a")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"net-a", "NET-A", "name-net-a"} {
		again, err := m.Allocate(t.Context(), ids[0], ref)
		if err != nil || !reflect.DeepEqual(again, a1) {
			t.Fatalf("Allocate(%s) again = %+v, %v; want %+v", ref, again, err, a1)
		}
	}
	b1, err := m.Allocate(t.Context(), ids[0], "net-b")
	if err != nil || b1.ID == a1.ID || b1.IP != "10.1.0.2" {
		t.Fatalf("second network: %+v, %v", b1, err)
	}
	// A fresh IPAM (a restart) finds the same port.
	if again, err := NewIPAM(st, m.nets).Allocate(t.Context(), ids[0], "net-a"); err != nil || again.ID != a1.ID {
		t.Fatalf("after restart: %+v, %v", again, err)
	}
	if _, err := m.Allocate(t.Context(), ids[1], "nope"); !errors.Is(err, ErrUnknownNetwork) {
		t.Fatalf("unknown network: %v", err)
	}
}

func TestFreeAndReuse(t *testing.T) {
	st := openStore(t)
	ids := createServers(t, st, 7)
	m := NewIPAM(st, Networks{netOf("n", "10.0.0.0/29")})
	ports := map[string]store.Port{}
	for _, id := range ids[:5] {
		p, err := m.Allocate(t.Context(), id, "n")
		if err != nil {
			t.Fatal(err)
		}
		ports[id] = p
	}
	for range 2 { // idempotent
		if err := m.Free(t.Context(), ports[ids[3]].ID); err != nil {
			t.Fatal(err)
		}
		if err := m.Free(t.Context(), ports[ids[1]].ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Free(t.Context(), "never-was"); err != nil {
		t.Fatalf("Free unknown: %v", err)
	}
	// Lowest free first: .3 (ids[1]'s) then .5 (ids[3]'s), then exhausted.
	p5, err := m.Allocate(t.Context(), ids[5], "n")
	if err != nil || p5.IP != "10.0.0.3" {
		t.Fatalf("after free: %+v, %v", p5, err)
	}
	p6, err := m.Allocate(t.Context(), ids[6], "n")
	if err != nil || p6.IP != "10.0.0.5" {
		t.Fatalf("after free: %+v, %v", p6, err)
	}
	if _, err := m.Allocate(t.Context(), ids[1], "n"); !errors.Is(err, ErrPoolExhausted) {
		t.Fatalf("full again: %v", err)
	}
}

func TestSkipsGatewayAndNetworkAddresses(t *testing.T) {
	st := openStore(t)
	ids := createServers(t, st, 4)
	n := Network{ID: "n", CIDR: netip.MustParsePrefix("10.0.0.0/29"), Gateway: ip("10.0.0.3"),
		RangeStart: ip("10.0.0.0"), RangeEnd: ip("10.0.0.7")}
	m := NewIPAM(st, Networks{n})
	var got []string
	for _, id := range ids {
		p, err := m.Allocate(t.Context(), id, "n")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.IP)
	}
	if want := []string{"10.0.0.1", "10.0.0.2", "10.0.0.4", "10.0.0.5"}; !slices.Equal(got, want) {
		t.Fatalf("addresses %v, want %v", got, want)
	}
}

func TestBadNetworks(t *testing.T) {
	st := openStore(t)
	ids := createServers(t, st, 1)
	m := NewIPAM(st, Networks{
		{ID: "v6", CIDR: netip.MustParsePrefix("fd00::/64")},
		{ID: "outside", CIDR: netip.MustParsePrefix("10.0.0.0/24"), RangeStart: ip("10.0.1.1"), RangeEnd: ip("10.0.1.9")},
		{ID: "huge", CIDR: netip.MustParsePrefix("10.0.0.0/7")},
	})
	for _, n := range []string{"v6", "outside", "huge"} {
		if _, err := m.Allocate(t.Context(), ids[0], n); err == nil {
			t.Errorf("Allocate on %s succeeded", n)
		}
	}
}

// TestTwoIPAMs: two IPAMs (two processes) over one store, concurrently.
func TestTwoIPAMs(t *testing.T) {
	st := openStore(t)
	ids := createServers(t, st, 150)
	nets := Networks{netOf("n", "10.0.0.0/24")}
	a, b := NewIPAM(st, nets), NewIPAM(st, nets)
	var mu sync.Mutex
	seen := map[string]store.Port{} // server -> port
	var wg sync.WaitGroup
	alloc := func(m *IPAM, id string) {
		p, err := m.Allocate(t.Context(), id, "n")
		if err != nil {
			t.Errorf("Allocate(%s): %v", id, err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if prev, ok := seen[id]; ok && !reflect.DeepEqual(prev, p) {
			t.Errorf("server %s got two ports: %+v and %+v", id, prev, p)
		}
		seen[id] = p
	}
	for i, id := range ids {
		switch {
		case i < 50: // both IPAMs for the same servers
			wg.Go(func() { alloc(a, id) })
			wg.Go(func() { alloc(b, id) })
		case i < 100:
			wg.Go(func() { alloc(a, id) })
		default:
			wg.Go(func() { alloc(b, id) })
		}
	}
	wg.Wait()
	used, err := st.UsedAddresses(t.Context(), "n")
	if err != nil {
		t.Fatal(err)
	}
	if len(used) != 150 || len(seen) != 150 {
		t.Fatalf("%d addresses in the store, %d servers with ports; want 150", len(used), len(seen))
	}
	byIP := map[string]string{}
	for id, p := range seen {
		if other, dup := byIP[p.IP]; dup {
			t.Fatalf("%s handed to %s and %s", p.IP, other, id)
		}
		byIP[p.IP] = id
	}
}

// TestStaleViews: each IPAM's bitmap goes stale when the other allocates
// or frees; the store fence and the reload on exhaustion keep both right.
func TestStaleViews(t *testing.T) {
	st := openStore(t)
	ids := createServers(t, st, 7)
	nets := Networks{netOf("n", "10.0.0.0/29")}
	a, b := NewIPAM(st, nets), NewIPAM(st, nets)
	ctx := t.Context()
	pa, err := a.Allocate(ctx, ids[0], "n") // a loads: {.2}
	if err != nil || pa.IP != "10.0.0.2" {
		t.Fatalf("%+v %v", pa, err)
	}
	for _, id := range ids[1:3] { // b takes .3 and .4 behind a's back
		if _, err := b.Allocate(ctx, id, "n"); err != nil {
			t.Fatal(err)
		}
	}
	p, err := a.Allocate(ctx, ids[3], "n") // a tries .3, .4 (in use), gets .5
	if err != nil || p.IP != "10.0.0.5" {
		t.Fatalf("a after b: %+v, %v", p, err)
	}
	p6, err := a.Allocate(ctx, ids[4], "n")
	if err != nil || p6.IP != "10.0.0.6" {
		t.Fatalf("%+v %v", p6, err)
	}
	// Pool full. b frees .2 (a's port); a's bitmap still says full: it reloads.
	if err := b.Free(ctx, pa.ID); err != nil {
		t.Fatal(err)
	}
	p, err = a.Allocate(ctx, ids[5], "n")
	if err != nil || p.IP != "10.0.0.2" {
		t.Fatalf("a after b's free: %+v, %v", p, err)
	}
	if _, err := a.Allocate(ctx, ids[6], "n"); !errors.Is(err, ErrPoolExhausted) {
		t.Fatalf("full: %v", err)
	}
}

// BenchmarkAllocate: one allocation per op on a /16 shared by 10,000
// servers (freed and started over when every server has its port).
func BenchmarkAllocate(b *testing.B) {
	st := openStore(b)
	ids := createServers(b, st, 10000)
	m := NewIPAM(st, Networks{netOf("n", "10.0.0.0/16")})
	ctx := b.Context()
	var ports []string
	i := 0
	for b.Loop() {
		if i == len(ids) {
			b.StopTimer()
			for _, id := range ports {
				if err := m.Free(ctx, id); err != nil {
					b.Fatal(err)
				}
			}
			ports, i = ports[:0], 0
			b.StartTimer()
		}
		p, err := m.Allocate(ctx, ids[i], "n")
		if err != nil {
			b.Fatal(err)
		}
		ports = append(ports, p.ID)
		i++
	}
}

// TestAllocateAs: a planned port is written with its id, node, MAC and
// binding in the one write; planning it again (a retry) returns the
// recorded port, not a second one, and gives its address back.
func TestAllocateAs(t *testing.T) {
	st := openStore(t)
	ids := createServers(t, st, 1)
	m := NewIPAM(st, Networks{netOf("net-a", "10.0.0.0/24")})
	want := store.Port{ID: uuid.NewString(), ServerID: ids[0], NetworkID: "name-net-a", VIFNode: "node-1",
		MAC: "52:54:00:00:00:01", Binding: store.Binding{PortUUID: "ironic-port-1"}}
	p, err := m.AllocateAs(t.Context(), want)
	if err != nil || p.ID != want.ID || p.NetworkID != "net-a" || p.IP != "10.0.0.2" || p.VIFNode != "node-1" ||
		p.MAC != want.MAC || p.Binding.PortUUID != "ironic-port-1" {
		t.Fatalf("AllocateAs = %+v, %v", p, err)
	}
	got, err := st.Ports(t.Context(), ids[0])
	if err != nil || len(got) != 1 || got[0].VIFNode != "node-1" || got[0].Binding.PortUUID != "ironic-port-1" {
		t.Fatalf("recorded %+v, %v", got, err)
	}
	retry := want
	retry.ID = uuid.NewString()
	again, err := m.AllocateAs(t.Context(), retry)
	if err != nil || again.ID != p.ID || again.IP != p.IP {
		t.Fatalf("planned again: %+v, %v; want the recorded %+v", again, err, p)
	}
	if next, err := m.Allocate(t.Context(), ids[0], "net-a"); err != nil || next.ID != p.ID {
		t.Fatalf("Allocate after: %+v, %v", next, err)
	}
	if q, err := m.AllocateSlot(t.Context(), ids[0], "net-a", "slot-x"); err != nil || q.IP != "10.0.0.3" {
		t.Fatalf("the retry's address was not given back: %+v, %v", q, err)
	}
	if _, err := m.AllocateAs(t.Context(), store.Port{ServerID: ids[0], NetworkID: "nope"}); !errors.Is(err, ErrUnknownNetwork) {
		t.Fatalf("unknown network: %v", err)
	}
}
