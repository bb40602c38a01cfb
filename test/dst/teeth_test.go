package dst

import (
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// TestDSTHasTeeth runs the simulation with deliberately broken decision
// logic and requires each bug to be caught within the CI seed budget, by
// the invariant that names it.
func TestDSTHasTeeth(t *testing.T) {
	cases := []struct {
		name   string
		decide func(lifecycle.Input, lifecycle.Config) lifecycle.Action
		want   []string // what the violations must name
	}{
		{"node 404 while deploying taken for a user delete", nodeGoneIsDelete, []string{"I6"}},
		{"reschedule forgets to detach VIFs and unreserve", unreserveForgets, []string{"I3", "VIF"}},
		{"build step overwrites a pending delete", hidesDelete, []string{"I2"}},
		{"release takes back a node that is no longer ours", releasesOthers, []string{"I7"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := defaultParams
			p.decide = c.decide
			names := func(r result) bool {
				msg := strings.Join(r.errs, "\n")
				for _, want := range c.want {
					if !strings.Contains(msg, want) {
						return false
					}
				}
				return true
			}
			caught, ran := sweepFor(t, p, 1, ciSeeds, 1, names)
			if len(caught) == 0 {
				t.Fatalf("no violation naming %v in %d seeds: the simulation cannot see this bug", c.want, ran)
			}
			r := caught[0]
			t.Logf("caught after %d seeds (seed %d):\n  %s", ran, r.seed, strings.Join(r.errs, "\n  "))
		})
	}
}

// TestDSTReplicasHaveTeeth breaks the lease keeper (its clock does not
// count a pause, so a paused replica acts on after its lease) and requires
// the replica variant to catch a second replica acting on a shard.
func TestDSTReplicasHaveTeeth(t *testing.T) {
	p := replicaParams
	p.lagLeaseClock = true
	caught, ran := sweepFor(t, p, 1, replicaSeeds, 1, func(r result) bool {
		return strings.Contains(strings.Join(r.errs, "\n"), "replicas:")
	})
	if len(caught) == 0 {
		t.Fatalf("no replicas violation in %d seeds: the simulation cannot see a replica acting past its lease", ran)
	}
	t.Logf("caught after %d seeds (seed %d):\n  %s", ran, caught[0].seed, strings.Join(caught[0].errs, "\n  "))
}

// nodeGoneIsDelete is Nova's bug: a node 404 during the deploy is taken
// for "the user deleted the server", which silently vanishes.
func nodeGoneIsDelete(in lifecycle.Input, cfg lifecycle.Config) lifecycle.Action {
	s := in.Server
	if s.Desired == lifecycle.DesiredActive && s.Phase == lifecycle.PhaseDeploying && s.DeployRequested &&
		in.Node.State == lifecycle.NodeGone && !in.Now.After(s.Deadline) {
		n := s.Clone()
		n.Phase, n.PhaseSince, n.UpdatedAt = lifecycle.PhaseDeleted, in.Now, in.Now
		n.NodeID, n.DeployRequested = "", false
		return lifecycle.Action{Kind: lifecycle.KindSave, Next: n, Why: "broken: node gone means deleted"}
	}
	return lifecycle.Decide(in, cfg)
}

// unreserveForgets releases a node by forgetting it: no VIF detach, no
// instance_uuid removal.
func unreserveForgets(in lifecycle.Input, cfg lifecycle.Config) lifecycle.Action {
	a := lifecycle.Decide(in, cfg)
	if a.Kind != lifecycle.KindUnreserve {
		return a
	}
	n := in.Server.Clone()
	n.NodeID, n.DeployRequested, n.UpdatedAt = "", false, in.Now
	return lifecycle.Action{Kind: lifecycle.KindSave, Next: n, Why: "broken: forget the node"}
}

// hidesDelete lets a build carry on as if no delete had been accepted.
func hidesDelete(in lifecycle.Input, cfg lifecycle.Config) lifecycle.Action {
	s := in.Server
	switch s.Phase {
	case lifecycle.PhasePending, lifecycle.PhaseReserving, lifecycle.PhaseNetworking, lifecycle.PhaseVolumes, lifecycle.PhaseDeploying:
		if s.Desired == lifecycle.DesiredDeleted {
			c := s.Clone()
			c.Desired = lifecycle.DesiredActive
			in.Server = c
		}
	}
	return lifecycle.Decide(in, cfg)
}

// releasesOthers un-reserves and undeploys a node whatever instance_uuid it
// carries now, as if it were still ours.
func releasesOthers(in lifecycle.Input, cfg lifecycle.Config) lifecycle.Action {
	v := in.Node
	if in.Server.NodeID != "" && v.Exists() && v.Holder != lifecycle.HeldByUs && !v.Locked {
		switch in.Server.Phase {
		case lifecycle.PhaseReleasing, lifecycle.PhaseError, lifecycle.PhaseDeleting, lifecycle.PhaseDeleted:
			if v.State == lifecycle.NodeActive || v.State == lifecycle.NodeDeployFailed {
				return lifecycle.Action{Kind: lifecycle.KindUndeploy, Why: "broken: undeploy whatever is there"}
			}
			return lifecycle.Action{Kind: lifecycle.KindUnreserve, RemoveInstance: true, Why: "broken: unreserve whatever is there"}
		}
	}
	return lifecycle.Decide(in, cfg)
}
