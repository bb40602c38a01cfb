package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// costNodes is how many nodes each of TestBenchIronicCost's calls is
// measured over.
const costNodes = 20

// TestBenchIronicCost: INGOT_BENCH=1. The real Ironic's own CPU for each
// call a build makes, through ingot's adapter in the order a build makes
// them, and their sum: /usr/bin/ironic runs the API and the conductor in one
// Python process, so N concurrent builds need at least N times that sum of
// its one core, whatever ingot does.
func TestBenchIronicCost(t *testing.T) {
	wanted(t)
	bus := ironictest.NewBus(t)
	ir := ironictest.StartReal(t, ironictest.RealOptions{Notifications: bus.IronicURL})
	ids := ir.EnrollNodes(t, costNodes, ironictest.NodeSpec{ResourceClass: "rc-cost", Kind: ironictest.Fast})
	ic, err := ironic.New(ironic.Config{URL: ir.URL, Microversion: ironictest.Microversion})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	var lines []string
	var perBuild time.Duration
	step := func(name string, each func(ctx context.Context, node string) error) {
		t.Helper()
		before := ir.CPU()
		for _, id := range ids {
			if err := each(ctx, id); err != nil {
				t.Fatalf("%s on %s: %v", name, id, err)
			}
		}
		d := (ir.CPU() - before) / costNodes
		perBuild += d
		lines = append(lines, fmt.Sprintf("%s %.1f ms", name, float64(d)/float64(time.Millisecond)))
	}
	// settle waits for every node to reach a state, looking once a second
	// (one list, a few ms of Ironic's CPU), and counts what Ironic spent
	// meanwhile, less its idle cost, as the background part of the calls.
	var idle time.Duration
	settle := func(name string, reached func(ironic.Node) bool) {
		t.Helper()
		before, start := ir.CPU(), time.Now()
		err := poll.WaitPaced(ctx, time.Minute, time.Second, func() (bool, string, error) {
			nodes, err := ic.ListClass(ctx, "rc-cost")
			done := 0
			for _, n := range nodes {
				if reached(n) {
					done++
				}
			}
			return err == nil && done == costNodes, fmt.Sprintf("%d of %d (%v)", done, costNodes, err), nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d := max(0, ir.CPU()-before-time.Duration(time.Since(start).Seconds()*float64(idle))) / costNodes
		perBuild += d
		lines = append(lines, fmt.Sprintf("%s %.1f ms", name, float64(d)/float64(time.Millisecond)))
	}
	idle = ir.CPU()
	time.Sleep(2 * time.Second) // the idle cost, to tell it apart from the calls'
	idle = (ir.CPU() - idle) / 2
	step("reserve (PATCH instance_uuid, instance_info)", func(ctx context.Context, node string) error {
		_, err := ic.Reserve(ctx, node, uuid.NewString(), map[string]any{"image_source": "http://127.0.0.1/image.qcow2",
			"root_gb": "10", "display_name": "cost"})
		return err
	})
	step("ports of the node (GET)", func(ctx context.Context, node string) error {
		_, err := ic.NodePorts(ctx, node)
		return err
	})
	step("attach VIF (POST)", func(ctx context.Context, node string) error {
		return ic.AttachVIF(ctx, node, uuid.NewString())
	})
	step("deploy (PUT provision active)", func(ctx context.Context, node string) error {
		return ic.Deploy(ctx, node, ironic.DeployRequest{InstanceInfoSet: true})
	})
	settle("the fake deploys to active", func(n ironic.Node) bool { return n.ProvisionState == "active" })
	step("power on (PUT power)", func(ctx context.Context, node string) error {
		return ic.SetPowerOn(ctx, node)
	})
	settle("the power-ons", func(n ironic.Node) bool { return n.PowerState == "power on" })
	step("one node (GET)", func(ctx context.Context, node string) error {
		_, err := ic.GetNode(ctx, node)
		return err
	})
	t.Logf("real Ironic's own CPU per call, over %d nodes (idle: %s per second): %s", costNodes, idle, strings.Join(lines, "; "))
	t.Logf("one build costs Ironic at least %.0f ms of its one process (the steps above; a build reads its node about twice, counted once here): "+
		"10 concurrent builds cannot all be ACTIVE in under %.1f s",
		float64(perBuild)/float64(time.Millisecond), 10*perBuild.Seconds())
}
