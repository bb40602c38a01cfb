package ironic_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// enroll adds an available Fast node of resource class rc.
func enroll(t *testing.T, env *ironictest.Env, name, rc string) string {
	t.Helper()
	return env.EnrollNode(t, ironictest.NodeSpec{Name: name, ResourceClass: rc, Kind: ironictest.Fast})
}

func instanceInfo(t *testing.T, env *ironictest.Env, id string) map[string]any {
	t.Helper()
	ii, _ := env.GetNode(t, id)["instance_info"].(map[string]any)
	return ii
}

// counter is an Observer that counts calls per op.
type counter struct {
	mu  sync.Mutex
	ops map[string]int
}

func (c *counter) observe(op string, _ error, _ time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ops == nil {
		c.ops = map[string]int{}
	}
	c.ops[op]++
}

func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.ops
	c.ops = nil
	return m
}

func newClient(t *testing.T, url string, pageSize int) (*ironic.Client, *counter) {
	t.Helper()
	cnt := &counter{}
	c, err := ironic.New(ironic.Config{URL: url, PageSize: pageSize, Timeout: 10 * time.Second, Observer: cnt.observe})
	if err != nil {
		t.Fatal(err)
	}
	return c, cnt
}

func newBenchClient(url string, cnt *counter) (*ironic.Client, error) {
	return ironic.New(ironic.Config{URL: url, Observer: cnt.observe})
}

// waitNode polls GetNode until cond holds or the timeout passes.
func waitNode(t *testing.T, c *ironic.Client, id string, timeout time.Duration, what string, cond func(ironic.Node) bool) ironic.Node {
	t.Helper()
	var n ironic.Node
	poll.Until(t, timeout, "node "+id+" "+what, func() (bool, string) {
		var err error
		n, err = c.GetNode(context.Background(), id)
		return err == nil && cond(n), fmt.Sprintf("%+v (err %v)", n, err)
	})
	return n
}

func uuids(ns []ironic.Node) []string {
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		out = append(out, n.UUID)
	}
	sort.Strings(out)
	return out
}

func sorted(s ...string) []string {
	sort.Strings(s)
	return s
}

func equal(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// TestAdapter runs the adapter against one Ironic — the real one when it is
// installed (ironictest.Start), else the simulator — each subtest on its own nodes.
func TestAdapter(t *testing.T) {
	h := ironictest.Start(t, ironictest.Options{})
	ctx := context.Background()

	t.Run("Ping", func(t *testing.T) {
		c, _ := newClient(t, h.URL+"/v1", 0)
		if err := c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Pagination", func(t *testing.T) {
		// Page size 2; nodes interleaved gold/silver so that an unfiltered
		// page 2 would contain silver (or associated, or maintenance) nodes.
		c, cnt := newClient(t, h.URL, 2)
		var gold, silver []string
		for i := range 5 {
			gold = append(gold, enroll(t, h, fmt.Sprintf("pg-gold-%d", i), "pg-gold"))
			silver = append(silver, enroll(t, h, fmt.Sprintf("pg-silver-%d", i), "pg-silver"))
		}
		inst := []string{uuid.NewString(), uuid.NewString(), uuid.NewString()}
		for i, id := range []string{gold[0], silver[1], gold[2]} {
			if _, err := c.Reserve(ctx, id, inst[i], nil); err != nil {
				t.Fatal(err)
			}
		}
		h.SetMaintenance(t, gold[3], true)
		cnt.take()

		assoc, err := c.ListAssociated(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := sorted(gold[0], silver[1], gold[2]); !equal(uuids(assoc), want) {
			t.Fatalf("ListAssociated = %v, want %v", uuids(assoc), want)
		}
		// 3 nodes, page size 2: a full page (with next) and a last page.
		if got := cnt.take()["node.list"]; got != 2 {
			t.Errorf("ListAssociated made %d list requests, want 2", got)
		}
		for _, n := range assoc {
			if n.InstanceUUID == "" || n.ProvisionState != ironic.StateAvailable {
				t.Errorf("associated node decoded wrong: %+v", n)
			}
		}

		// The fast tick's filtered list: the filter survives the pages.
		inState, err := c.ListInState(ctx, ironic.StateAvailable)
		if err != nil {
			t.Fatal(err)
		}
		if want := sorted(append(slices.Clone(gold), silver...)...); !equal(uuids(inState), want) {
			t.Fatalf("ListInState(available) = %v, want %v", uuids(inState), want)
		}
		if none, err := c.ListInState(ctx, ironic.StateDeploying); err != nil || len(none) != 0 {
			t.Fatalf("ListInState(deploying) = %v, %v; want none", uuids(none), err)
		}
		cnt.take()

		avail, err := c.ListAvailable(ctx, "pg-gold")
		if err != nil {
			t.Fatal(err)
		}
		// gold 0 and 2 are reserved, gold 3 in maintenance: only 1 and 4.
		if want := sorted(gold[1], gold[4]); !equal(uuids(avail), want) {
			t.Fatalf("ListAvailable(pg-gold) = %v, want %v (filters lost on page 2?)", uuids(avail), want)
		}
		for _, n := range avail {
			if n.ResourceClass != "pg-gold" || n.Maintenance || n.InstanceUUID != "" || n.Traits == nil {
				t.Errorf("available node decoded wrong: %+v", n)
			}
		}
		anyAvail, err := c.ListAvailable(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, n := range anyAvail {
			if n.InstanceUUID != "" || n.Maintenance || n.ProvisionState != ironic.StateAvailable {
				t.Errorf("ListAvailable(\"\") returned a non-candidate: %+v", n)
			}
			seen[n.UUID] = true
		}
		for _, id := range []string{gold[1], gold[4], silver[0], silver[2], silver[3], silver[4]} {
			if !seen[id] {
				t.Errorf("ListAvailable(\"\") misses %s", id)
			}
		}

		all, err := c.ListNodes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) < 10 {
			t.Fatalf("ListNodes = %d nodes, want >= 10", len(all))
		}
		for _, n := range all {
			if n.UUID == gold[3] && (!n.Maintenance || n.MaintenanceReason != "ironictest") {
				t.Errorf("maintenance not decoded: %+v", n)
			}
		}
	})

	t.Run("Reserve", func(t *testing.T) {
		c, cnt := newClient(t, h.URL, 0)
		a := enroll(t, h, "rs-a", "rs")
		b := enroll(t, h, "rs-b", "rs")
		i1, i2 := uuid.NewString(), uuid.NewString()
		n, err := c.Reserve(ctx, a, i1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n.UUID != a || n.InstanceUUID != i1 || n.ProvisionState != ironic.StateAvailable || n.ResourceClass != "rs" {
			t.Fatalf("Reserve returned %+v", n)
		}
		// NOTE: the PATCH answer shows reservation "localhost": the lock the
		// conductor held for this very update. Do not read it as "busy".
		if n.Name != "rs-a" || n.Maintenance {
			t.Fatalf("Reserve returned %+v", n)
		}
		if _, err := c.Reserve(ctx, a, i1, nil); err != nil {
			t.Fatalf("repeat Reserve: %v", err)
		}
		if _, err := c.Reserve(ctx, a, i2, nil); !errors.Is(err, ironic.ErrNodeAssociated) {
			t.Fatalf("Reserve taken node = %v, want ErrNodeAssociated", err)
		}
		if _, err := c.Reserve(ctx, b, i1, nil); !errors.Is(err, ironic.ErrInstanceAssociated) {
			t.Fatalf("Reserve second node = %v, want ErrInstanceAssociated", err)
		}
		if _, err := c.Reserve(ctx, b, "not-a-uuid", nil); !errors.Is(err, ironic.ErrInvalid) {
			t.Fatalf("Reserve bad uuid = %v, want ErrInvalid", err)
		}
		if got := cnt.take()["node.patch"]; got != 5 {
			t.Errorf("5 Reserve calls made %d PATCHes", got)
		}

		if err := c.Unreserve(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := c.Unreserve(ctx, a); err != nil {
			t.Fatalf("repeat Unreserve: %v", err)
		}
		got, err := c.GetNode(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if got.InstanceUUID != "" || got.ProvisionState != ironic.StateAvailable {
			t.Fatalf("after Unreserve: %+v", got)
		}
		if ii := instanceInfo(t, h, a); len(ii) != 0 {
			t.Fatalf("instance_info after Unreserve: %v", ii)
		}
		if _, err := c.Reserve(ctx, b, i1, nil); err != nil {
			t.Fatalf("Reserve after Unreserve: %v", err)
		}
	})

	t.Run("ReserveRace", func(t *testing.T) {
		// 8 parallel reservations of one node for different instances:
		// exactly one wins; the others see ErrNodeAssociated or, when they hit
		// the winner's lock, ErrNodeLocked (docs/ironic.md §3).
		c, _ := newClient(t, h.URL, 0)
		id := enroll(t, h, "race-a", "race")
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = c.Reserve(ctx, id, uuid.NewString(), nil)
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case errors.Is(err, ironic.ErrNodeAssociated), errors.Is(err, ironic.ErrNodeLocked):
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}
		if wins != 1 {
			t.Fatalf("%d reservations won, want 1: %v", wins, errs)
		}
	})

	t.Run("BulkViewCost", func(t *testing.T) {
		// 25 associated nodes: one request at the default page size, and
		// ⌈25/10⌉ = 3 at page size 10.
		ids := h.EnrollNodes(t, 25, ironictest.NodeSpec{Name: "bulk", ResourceClass: "bulk"})
		c, cnt := newClient(t, h.URL, 10)
		for _, id := range ids {
			if _, err := c.Reserve(ctx, id, uuid.NewString(), nil); err != nil {
				t.Fatal(err)
			}
		}
		big, bigCnt := newClient(t, h.URL, 0)
		for _, tc := range []struct {
			c    *ironic.Client
			cnt  *counter
			want int
		}{{big, bigCnt, 1}, {c, cnt, 3}} {
			tc.cnt.take()
			start := time.Now()
			nodes, err := tc.c.ListAssociated(ctx)
			if err != nil {
				t.Fatal(err)
			}
			d := time.Since(start)
			mine := 0
			for _, n := range nodes {
				if n.ResourceClass == "bulk" {
					mine++
				}
			}
			if mine != 25 {
				t.Fatalf("ListAssociated shows %d of the 25 bulk nodes", mine)
			}
			// Other subtests' reservations may add a page; never more.
			got := tc.cnt.take()["node.list"]
			if got < tc.want || got > tc.want+1 {
				t.Errorf("ListAssociated of %d nodes: %d requests, want %d", len(nodes), got, tc.want)
			}
			t.Logf("ListAssociated: %d nodes, %d requests, %v", len(nodes), got, d)
		}
	})

	t.Run("DeployUndeploy", func(t *testing.T) { adapterDeployUndeploy(ctx, t, h) })
	t.Run("ReserveWithInstanceInfo", func(t *testing.T) { adapterReserveWithInfo(ctx, t, h) })

	t.Run("DeployRefused", func(t *testing.T) { adapterDeployRefused(ctx, t, h) })

	t.Run("NotFound", func(t *testing.T) {
		c, _ := newClient(t, h.URL, 0)
		id := enroll(t, h, "nf-a", "nf")
		h.OutOfBandDelete(t, id)
		check := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, ironic.ErrNotFound) {
				t.Errorf("%s on deleted node = %v, want ErrNotFound", what, err)
			}
		}
		_, err := c.GetNode(ctx, id)
		check("GetNode", err)
		_, err = c.Reserve(ctx, id, uuid.NewString(), nil)
		check("Reserve", err)
		check("Unreserve", c.Unreserve(ctx, id))
		check("Deploy", c.Deploy(ctx, id, ironic.DeployRequest{}))
		check("Undeploy", c.Undeploy(ctx, id))
		check("DetachVIF", c.DetachVIF(ctx, id, "vif-1"))
		check("AttachVIF", c.AttachVIF(ctx, id, "vif-1"))
		_, err = c.ListVIFs(ctx, id)
		check("ListVIFs", err)
		check("SetPowerOff", c.SetPowerOff(ctx, id))
		check("DeleteVolumeTarget", c.DeleteVolumeTarget(ctx, uuid.NewString()))
	})

	t.Run("Volumes", func(t *testing.T) { adapterVolumes(ctx, t, h) })
	t.Run("Ports", func(t *testing.T) { adapterPorts(ctx, t, h) })
}
