package ironic_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/portbind"
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
			if _, err := c.Reserve(ctx, id, inst[i]); err != nil {
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
		n, err := c.Reserve(ctx, a, i1)
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
		if _, err := c.Reserve(ctx, a, i1); err != nil {
			t.Fatalf("repeat Reserve: %v", err)
		}
		if _, err := c.Reserve(ctx, a, i2); !errors.Is(err, ironic.ErrNodeAssociated) {
			t.Fatalf("Reserve taken node = %v, want ErrNodeAssociated", err)
		}
		if _, err := c.Reserve(ctx, b, i1); !errors.Is(err, ironic.ErrInstanceAssociated) {
			t.Fatalf("Reserve second node = %v, want ErrInstanceAssociated", err)
		}
		if _, err := c.Reserve(ctx, b, "not-a-uuid"); !errors.Is(err, ironic.ErrInvalid) {
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
		if _, err := c.Reserve(ctx, b, i1); err != nil {
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
				_, errs[i] = c.Reserve(ctx, id, uuid.NewString())
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
			if _, err := c.Reserve(ctx, id, uuid.NewString()); err != nil {
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

	t.Run("DeployUndeploy", func(t *testing.T) {
		c, cnt := newClient(t, h.URL, 0)
		id := enroll(t, h, "dp-a", "dp")
		inst := uuid.NewString()
		if _, err := c.Reserve(ctx, id, inst); err != nil {
			t.Fatal(err)
		}
		for _, vif := range []string{"vif-1", "vif-1"} { // noop network: a no-op, repeatable
			if err := c.AttachVIF(ctx, id, vif); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.ListVIFs(ctx, id); err != nil {
			t.Fatal(err)
		}
		cnt.take()
		req := ironic.DeployRequest{
			InstanceInfo: map[string]any{
				"image_source": "http://127.0.0.1:1/img.qcow2", "root_gb": "10",
				"capabilities": map[string]any{"boot_mode": "uefi"},
			},
			ConfigDrive: &ironic.ConfigDrive{
				MetaData: map[string]any{"uuid": inst, "hostname": "dp-a"},
				UserData: "#cloud-config\n",
			},
		}
		start := time.Now()
		if err := c.Deploy(ctx, id, req); err != nil {
			t.Fatal(err)
		}
		// Nothing to remove: no GET of instance_info, one PATCH, one PUT.
		if got := cnt.take(); got["node.get"] != 0 || got["node.patch"] != 1 || got["node.provision"] != 1 {
			t.Errorf("Deploy calls: %v, want one PATCH, one PUT", got)
		}
		n := waitNode(t, c, id, 30*time.Second, "active", func(n ironic.Node) bool {
			return n.ProvisionState == ironic.StateActive && n.TargetProvisionState == ""
		})
		t.Logf("deploy to active in %v", time.Since(start))
		if n.InstanceUUID != inst {
			t.Fatalf("active node %+v", n)
		}
		ii := instanceInfo(t, h, id)
		if ii["image_source"] != "http://127.0.0.1:1/img.qcow2" || ii["configdrive"] != "******" {
			t.Fatalf("instance_info = %v", ii)
		}
		// A second deploy of an active node is refused as invalid state.
		if err := c.Deploy(ctx, id, req); !errors.Is(err, ironic.ErrInvalidState) {
			t.Fatalf("Deploy on active = %v, want ErrInvalidState", err)
		}
		// …after setting the same instance_info again (a repeated deploy
		// sends the same PATCH).
		cnt.take()
		if again := instanceInfo(t, h, id); !reflect.DeepEqual(again, ii) {
			t.Errorf("instance_info after the repeated deploy: %v, want %v", again, ii)
		}
		// A key to remove reads instance_info first: removed when present,
		// nothing sent when absent.
		for _, want := range []int{1, 0} {
			rm := ironic.DeployRequest{InstanceInfo: map[string]any{"image_source": "http://127.0.0.1:1/img.qcow2", "root_gb": nil}}
			if err := c.Deploy(ctx, id, rm); !errors.Is(err, ironic.ErrInvalidState) {
				t.Fatalf("Deploy on active = %v, want ErrInvalidState", err)
			}
			if got := cnt.take(); got["node.get"] != 1 || got["node.patch"] != want {
				t.Errorf("deploy removing root_gb: %v, want one GET and %d PATCH", got, want)
			}
		}
		if _, ok := instanceInfo(t, h, id)["root_gb"]; ok {
			t.Errorf("root_gb kept: %v", instanceInfo(t, h, id))
		}

		if err := c.Undeploy(ctx, id); err != nil {
			t.Fatal(err)
		}
		// NOTE: "available" with no target can be seen while the conductor
		// still holds the node's lock for a few ms; an action sent then gets
		// ErrNodeLocked (measured). Wait for the lock to go too.
		n = waitNode(t, c, id, 30*time.Second, "available and unlocked", func(n ironic.Node) bool {
			return n.ProvisionState == ironic.StateAvailable && n.TargetProvisionState == "" && n.Reservation == ""
		})
		if n.InstanceUUID != "" {
			t.Fatalf("instance_uuid kept after undeploy: %+v", n)
		}
		if err := c.Undeploy(ctx, id); !errors.Is(err, ironic.ErrInvalidState) {
			t.Fatalf("Undeploy available = %v, want ErrInvalidState", err)
		}
	})

	t.Run("DeployRefused", func(t *testing.T) {
		c, _ := newClient(t, h.URL, 0)
		id := enroll(t, h, "dr-a", "dr")
		h.SetMaintenance(t, id, true)
		if err := c.Deploy(ctx, id, ironic.DeployRequest{}); !errors.Is(err, ironic.ErrInvalidState) {
			t.Fatalf("Deploy in maintenance = %v, want ErrInvalidState", err)
		}
		id2 := enroll(t, h, "dr-b", "dr")
		err := c.Deploy(ctx, id2, ironic.DeployRequest{InstanceInfo: map[string]any{"image_source": "x"}})
		if !errors.Is(err, ironic.ErrInvalid) {
			t.Fatalf("Deploy with a bad image href = %v, want ErrInvalid", err)
		}
	})

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
		_, err = c.Reserve(ctx, id, uuid.NewString())
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

	t.Run("Volumes", func(t *testing.T) {
		c, _ := newClient(t, h.URL, 0)
		id := enroll(t, h, "vt-a", "vt")
		if err := c.SetStorageInterface(ctx, id, "external"); err != nil {
			t.Fatal(err)
		}
		cid, err := c.CreateVolumeConnector(ctx, id, "iqn", "iqn.2010-10.org.openstack:vt-a")
		if err != nil || cid == "" {
			t.Fatalf("CreateVolumeConnector = %q, %v", cid, err)
		}
		conns, err := c.ListVolumeConnectors(ctx, id)
		if err != nil || len(conns) != 1 || conns[0].UUID != cid || conns[0].ConnectorID != "iqn.2010-10.org.openstack:vt-a" {
			t.Fatalf("ListVolumeConnectors = %+v, %v", conns, err)
		}
		tid, err := c.CreateVolumeTarget(ctx, ironic.VolumeTarget{NodeID: id, VolumeType: "iscsi", VolumeID: "vol-1",
			BootIndex: 0, Properties: map[string]any{"target_lun": 0}})
		if err != nil || tid == "" {
			t.Fatalf("CreateVolumeTarget = %q, %v", tid, err)
		}
		_, err = c.CreateVolumeTarget(ctx, ironic.VolumeTarget{NodeID: id, VolumeType: "iscsi", VolumeID: "vol-2"})
		if !errors.Is(err, ironic.ErrInvalid) {
			t.Fatalf("duplicate boot index = %v, want ErrInvalid", err)
		}
		targets, err := c.ListVolumeTargets(ctx, id)
		if err != nil || len(targets) != 1 || targets[0].UUID != tid || targets[0].VolumeID != "vol-1" || targets[0].NodeID != id {
			t.Fatalf("ListVolumeTargets = %+v, %v", targets, err)
		}
		// Deleting a target needs power_state "power off" (§5).
		if r := h.Request(t, "PUT", "/v1/nodes/"+id+"/states/power", map[string]any{"target": "power on"}); r.Status != 202 {
			t.Fatalf("power on: %d %s", r.Status, r.Fault())
		}
		waitNode(t, c, id, 10*time.Second, "powered on", func(n ironic.Node) bool { return n.PowerState == "power on" })
		if err := c.DeleteVolumeTarget(ctx, tid); !errors.Is(err, ironic.ErrInvalidState) {
			t.Fatalf("DeleteVolumeTarget while not powered off = %v, want ErrInvalidState", err)
		}
		if err := c.SetPowerOff(ctx, id); err != nil {
			t.Fatal(err)
		}
		// NOTE: the power change holds the node's lock a little past the new
		// power_state; a target delete sent then gets ErrNodeLocked (seen).
		unlockedOff := func(n ironic.Node) bool { return n.PowerState == "power off" && n.Reservation == "" }
		waitNode(t, c, id, 10*time.Second, "powered off and unlocked", unlockedOff)
		if err := c.SetPowerOff(ctx, id); err != nil {
			t.Fatalf("SetPowerOff on a node already off: %v", err)
		}
		waitNode(t, c, id, 10*time.Second, "powered off and unlocked", unlockedOff)
		if err := c.DeleteVolumeTarget(ctx, tid); err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteVolumeTarget(ctx, tid); !errors.Is(err, ironic.ErrNotFound) {
			t.Fatalf("second DeleteVolumeTarget = %v, want ErrNotFound", err)
		}
		if err := c.DeleteVolumeConnector(ctx, cid); err != nil {
			t.Fatal(err)
		}
		if targets, err := c.ListVolumeTargets(ctx, id); err != nil || len(targets) != 0 {
			t.Fatalf("targets after delete: %+v, %v", targets, err)
		}
		if conns, err := c.ListVolumeConnectors(ctx, id); err != nil || len(conns) != 0 {
			t.Fatalf("connectors after delete: %+v, %v", conns, err)
		}
	})
	t.Run("Ports", func(t *testing.T) {
		c, cnt := newClient(t, h.URL, 0)
		plain := h.EnrollNode(t, ironictest.NodeSpec{Name: "ports-plain", ResourceClass: "ports", Ports: 2, PhysicalNetwork: "physnet1"})
		bond := h.EnrollNode(t, ironictest.NodeSpec{Name: "ports-bond", ResourceClass: "ports", Ports: 1, BondPorts: 2, BondMode: "802.3ad",
			Properties: map[string]any{"capabilities": "boot_mode:uefi,secure_boot:true"}})
		cnt.take()
		inv, err := c.NodePorts(ctx, plain)
		if err != nil || len(inv.Ports) != 2 || inv.Portgroups != nil || !inv.Ports[0].PXE || inv.Ports[0].Physnet != "physnet1" ||
			inv.Ports[0].Node != plain || inv.Ports[0].MAC != h.Ports(t, plain)[0].Address {
			t.Fatalf("NodePorts(plain) = %+v, %v", inv, err)
		}
		if got := cnt.take(); got["port.list"] != 1 || got["portgroup.list"] != 0 {
			t.Errorf("calls for a node without a bond: %v, want one port list", got)
		}
		inv, err = c.NodePorts(ctx, bond)
		if err != nil || len(inv.Ports) != 3 || len(inv.Portgroups) != 1 || inv.Portgroups[0].Mode != "802.3ad" ||
			inv.Ports[1].Portgroup != inv.Portgroups[0].UUID || inv.Ports[0].Portgroup != "" {
			t.Fatalf("NodePorts(bond) = %+v, %v", inv, err)
		}
		if got := cnt.take(); got["port.list"] != 1 || got["portgroup.list"] != 1 {
			t.Errorf("calls for a node with a bond: %v, want a port list and a portgroup list", got)
		}
		all, err := c.ListPorts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, p := range all {
			per[p.Node]++
		}
		if per[plain] != 2 || per[bond] != 3 {
			t.Errorf("ListPorts: %v per node", per)
		}
		// VIF attach on a named port and portgroup (noop on the harness's Ironic).
		if err := c.AttachVIFTo(ctx, bond, uuid.NewString(), portbind.Target{Portgroup: inv.Portgroups[0].UUID}); err != nil {
			t.Errorf("AttachVIFTo portgroup: %v", err)
		}
		if err := c.AttachVIFTo(ctx, bond, uuid.NewString(), portbind.Target{Port: inv.Ports[0].UUID}); err != nil {
			t.Errorf("AttachVIFTo port: %v", err)
		}
		nodes, err := c.ListAvailable(ctx, "ports")
		if err != nil || len(nodes) != 2 {
			t.Fatalf("ListAvailable = %d nodes, %v", len(nodes), err)
		}
		for _, n := range nodes {
			want := map[string]string(nil)
			if n.UUID == bond {
				want = map[string]string{"boot_mode": "uefi", "secure_boot": "true"}
			}
			if fmt.Sprint(n.Capabilities) != fmt.Sprint(want) {
				t.Errorf("node %s capabilities %v, want %v", n.Name, n.Capabilities, want)
			}
		}
	})
}

// TestNodeLocked: while a slow fake deploy holds the node (deploy_delay), a
// PATCH is refused with "state transition is in progress" and an undeploy
// with NodeLocked; both are ErrNodeLocked and transient.
func TestNodeLocked(t *testing.T) {
	h := ironictest.Start(t, ironictest.Options{DeployDelay: 3 * time.Second})
	ctx := context.Background()
	c, _ := newClient(t, h.URL, 0)
	id := enroll(t, h, "lk-a", "lk")
	inst := uuid.NewString()
	if _, err := c.Reserve(ctx, id, inst); err != nil {
		t.Fatal(err)
	}
	if err := c.Deploy(ctx, id, ironic.DeployRequest{}); err != nil {
		t.Fatal(err)
	}
	// DeployDelay 3 s keeps the node in "deploying" with a reservation for
	// about 6 s; the checks below take well under a second.
	n := waitNode(t, c, id, 10*time.Second, "deploying and locked", func(n ironic.Node) bool {
		return n.ProvisionState == ironic.StateDeploying && n.Reservation != ""
	})
	if _, err := c.Reserve(ctx, id, inst); !errors.Is(err, ironic.ErrNodeLocked) || !ironic.IsTransient(err) {
		t.Fatalf("PATCH while deploying = %v, want ErrNodeLocked", err)
	}
	if err := c.Unreserve(ctx, id); !errors.Is(err, ironic.ErrNodeLocked) {
		t.Fatalf("Unreserve while deploying = %v, want ErrNodeLocked", err)
	}
	if err := c.Undeploy(ctx, id); !errors.Is(err, ironic.ErrNodeLocked) {
		t.Fatalf("Undeploy while deploying = %v, want ErrNodeLocked", err)
	}
	if now, err := c.GetNode(ctx, id); err != nil || now.ProvisionState != ironic.StateDeploying {
		t.Fatalf("node left deploying during the checks (%+v, %v): the test raced; raise DeployDelay", now, err)
	}
	t.Logf("locked node: %+v", n)
	waitNode(t, c, id, 30*time.Second, "active", func(n ironic.Node) bool { return n.ProvisionState == ironic.StateActive })
}
