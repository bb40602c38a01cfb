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
// group keeps s off, or a *NoCandidateError when nothing can be chosen.
//
// Each Ironic node is its own host (as with Nova's Ironic driver, one
// server per node), so: affinity places only a group's first member (any
// later one would need the node the first holds: no_valid_host, unless
// every older member failed without a node); anti-affinity keeps s off
// the members' nodes, and max_server_per_host (>= 1) always holds; the
// soft policies are best effort, met by any free node.
func (sc *Scheduler) admit(ctx context.Context, s *lifecycle.Server) (map[string]bool, error) {
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
	var self *store.ServerGroupMember
	for i := range members {
		if members[i].ServerID == s.ID {
			self = &members[i]
		}
	}
	avoid := map[string]bool{}
	for _, m := range members {
		if m.ServerID == s.ID {
			continue
		}
		switch g.Policy {
		case store.PolicyAffinity:
			older := self != nil && (m.CreatedAt.Before(self.CreatedAt) ||
				(m.CreatedAt.Equal(self.CreatedAt) && m.ServerID < self.ServerID))
			if m.NodeID != "" || (older && m.Phase != lifecycle.PhaseError) {
				return nil, &NoCandidateError{ResourceClass: s.Spec.ResourceClass,
					Reason: fmt.Sprintf("server group %s (affinity) has server %s; a bare-metal node carries one server", g.ID, m.ServerID)}
			}
		case store.PolicyAntiAffinity, store.PolicySoftAntiAffinity:
			if m.NodeID != "" {
				avoid[m.NodeID] = true
			}
		}
	}
	return avoid, nil
}
