package ironictest

import (
	"slices"
	"sort"
	"testing"

	"github.com/ingot-dev/ingot/internal/history"
)

// HistoryNodes reads the nodes (every one when none is named) with their
// VIFs, as the history check takes them.
func (e *Env) HistoryNodes(t testing.TB, only ...string) []history.Node {
	t.Helper()
	var body struct {
		Nodes []struct {
			UUID           string  `json:"uuid"`
			InstanceUUID   *string `json:"instance_uuid"`
			ProvisionState string  `json:"provision_state"`
		} `json:"nodes"`
	}
	e.decode(t, e.expect(t, "GET", "/v1/nodes?fields=uuid,instance_uuid,provision_state", nil, 200), &body)
	out := make([]history.Node, 0, len(body.Nodes))
	for _, n := range body.Nodes {
		if len(only) > 0 && !slices.Contains(only, n.UUID) {
			continue
		}
		h := history.Node{UUID: n.UUID, ProvisionState: n.ProvisionState, VIFs: e.ListVIFs(t, n.UUID)}
		if n.InstanceUUID != nil {
			h.InstanceUUID = *n.InstanceUUID
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UUID < out[j].UUID })
	return out
}
