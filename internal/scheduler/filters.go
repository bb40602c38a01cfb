package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/portbind"
)

// Why returns the reason a *NoCandidateError carries ("" for any other error).
func Why(err error) string {
	var nc *NoCandidateError
	if errors.As(err, &nc) {
		return nc.Reason
	}
	return ""
}

// portIndex is every Ironic port by node, listed in one bulk call (the
// node list does not say how many ports a node has).
type portIndex struct {
	mu        sync.Mutex // one listing at a time
	byNode    map[string][]portbind.Port
	fetchedAt time.Time
}

// refreshPorts relists the ports when the index is older than maxAge.
func (sc *Scheduler) refreshPorts(ctx context.Context, maxAge time.Duration) error {
	sc.ports.mu.Lock()
	defer sc.ports.mu.Unlock()
	sc.mu.Lock()
	fresh := sc.ports.byNode != nil && sc.clock.Now().Sub(sc.ports.fetchedAt) < maxAge
	sc.mu.Unlock()
	if fresh {
		return nil
	}
	all, err := sc.inv.ListPorts(ctx)
	if err != nil {
		return err
	}
	by := make(map[string][]portbind.Port)
	for _, p := range all {
		by[p.Node] = append(by[p.Node], p)
	}
	sc.mu.Lock()
	sc.ports.byNode, sc.ports.fetchedAt = by, sc.clock.Now()
	sc.mu.Unlock()
	return nil
}

// physnets lists each requested network's physical network ("" for any).
func (sc *Scheduler) physnets(s *lifecycle.Server) []string {
	out := make([]string, len(s.Spec.Networks))
	for i, id := range s.Spec.Networks {
		if n, ok := sc.opts.Networks.Lookup(id); ok {
			out[i] = n.PhysicalNetwork
		}
	}
	return out
}

// misfit says why node n cannot carry s ("" when it can). Caller holds sc.mu.
func (sc *Scheduler) misfit(n ironic.Node, s *lifecycle.Server, physnets []string) string {
	for _, t := range s.Spec.RequiredTraits {
		if !slices.Contains(n.Traits, t) {
			return "lacks trait " + t
		}
	}
	for _, t := range s.Spec.ForbiddenTraits {
		if slices.Contains(n.Traits, t) {
			return "has forbidden trait " + t
		}
	}
	for _, k := range sortedKeys(s.Spec.Capabilities) {
		if v := s.Spec.Capabilities[k]; n.Capabilities[k] != v {
			return fmt.Sprintf("lacks capability %s:%s", k, v)
		}
	}
	if len(physnets) > 0 && !portbind.Fits(sc.ports.byNode[n.UUID], physnets) {
		return fmt.Sprintf("has too few free Ironic ports for %d network(s)", len(physnets))
	}
	return ""
}

// whyNone explains, after a fresh listing found nothing, which filters
// left the class's nodes out: a required trait no node has is named first.
func (sc *Scheduler) whyNone(s *lifecycle.Server) string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	c := sc.classes[s.Spec.ResourceClass]
	if c == nil || len(c.nodes) == 0 {
		return ""
	}
	for _, t := range s.Spec.RequiredTraits {
		held := false
		for _, n := range c.nodes {
			held = held || slices.Contains(n.Traits, t)
		}
		if !held {
			return fmt.Sprintf("no available node has required trait %s", t)
		}
	}
	physnets := sc.physnets(s)
	counts := map[string]int{}
	for _, n := range c.nodes {
		if why := sc.misfit(n, s, physnets); why != "" {
			counts[why]++
		}
	}
	if len(counts) == 0 {
		return ""
	}
	var parts []string
	for why, k := range counts {
		parts = append(parts, fmt.Sprintf("%d node(s) %s", k, why))
	}
	sort.Strings(parts)
	return "of " + fmt.Sprint(len(c.nodes)) + " available node(s), " + strings.Join(parts, ", ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
