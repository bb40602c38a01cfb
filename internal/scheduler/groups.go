package scheduler

import (
	"context"
	"fmt"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// ReasonNoService is the NoCandidateError reason when no compute service
// may take new builds (os-services: all disabled or forced down).
const ReasonNoService = "no enabled compute service: every nova-compute service is disabled or forced down"

// admit applies what is not about a node's fit: the compute services
// (Options.Schedulable) and the server's group. It returns the nodes the
// group keeps s off (refuse, nil: none), or a *NoCandidateError when nothing
// can be chosen.
//
// As with Nova's Ironic driver, a host is a compute service and its nodes
// are spread over the services (Options.NodeHost): affinity keeps s on the
// host of the members that hold a node (any node of it: one server per
// node); anti-affinity keeps s off the members' nodes — stricter than
// Nova's, whose filter would refuse every node of the members' host — and
// max_server_per_host (>= 1) always holds; the soft policies are best
// effort, met by any free node.
func (sc *Scheduler) admit(ctx context.Context, s *lifecycle.Server) (refuse func(node string) bool, err error) {
	if sc.opts.Schedulable != nil {
		ok, err := sc.opts.Schedulable(ctx)
		if err != nil {
			return nil, fmt.Errorf("scheduler: compute services: %w", err)
		}
		if !ok {
			return nil, &NoCandidateError{ResourceClass: s.Spec.ResourceClass, Reason: ReasonNoService}
		}
	}
	g := s.Spec.Group
	if g == nil || sc.opts.GroupMembers == nil {
		return nil, nil
	}
	members, err := sc.opts.GroupMembers(ctx, g.ID)
	if err != nil {
		return nil, fmt.Errorf("scheduler: server group %s: %w", g.ID, err)
	}
	placed := map[string]bool{}
	for _, m := range members {
		if m.ServerID != s.ID && m.NodeID != "" {
			placed[m.NodeID] = true
		}
	}
	if len(placed) == 0 {
		return nil, nil
	}
	switch g.Policy {
	case store.PolicyAffinity:
		if sc.opts.NodeHost == nil {
			return nil, nil // one host: every node is on it
		}
		hostOf, err := sc.opts.NodeHost(ctx)
		if err != nil {
			return nil, fmt.Errorf("scheduler: compute hosts: %w", err)
		}
		hosts := map[string]bool{}
		for node := range placed {
			hosts[hostOf(node)] = true
		}
		return func(node string) bool { return !hosts[hostOf(node)] }, nil
	case store.PolicyAntiAffinity, store.PolicySoftAntiAffinity:
		return func(node string) bool { return placed[node] }, nil
	}
	return nil, nil
}
