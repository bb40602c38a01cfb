package ironicsim

import (
	"bytes"
	"testing"
	"time"
)

// The hand-rolled list encoder must write the same bytes as encoding/json
// on the rendered maps.
func TestAppendNodeListMatchesEncodingJSON(t *testing.T) {
	sim := New(Options{Seed: 3})
	ids := sim.AddNodes(2, NodeSpec{ResourceClass: "rc", Traits: []string{"CUSTOM_A"},
		Properties: map[string]any{"cpus": 8, "weird": "a\"b\\c\n<&>\u2028é"}})
	sim.mu.Lock()
	defer sim.mu.Unlock()
	n := sim.nodes[ids[0]]
	n.InstanceUUID = inst1
	n.LastError = "x \"quoted\" \t tab"
	n.UpdatedAt = t0.Add(1500 * time.Microsecond)
	page := []*node{n, sim.nodes[ids[1]]}
	fieldSets := [][]string{
		defaultNodeFields,
		{"uuid", "provision_state", "target_provision_state", "instance_uuid", "last_error", "maintenance", "reservation"},
		{"properties", "traits", "resource_class", "updated_at", "provision_updated_at", "name", "instance_info", "shard"},
	}
	for _, ver := range []int{1, 9, 78, 82} {
		for _, fields := range fieldSets {
			items := make([]any, len(page))
			for i, p := range page {
				items[i] = renderNode(p, fields, ver, "http://h:1")
			}
			want := encodeJSON(map[string]any{"nodes": items, "next": "http://h:1/v1/nodes?a=1&b=2"})
			got := appendNodeList(nil, page, fields, ver, "http://h:1", "http://h:1/v1/nodes?a=1&b=2")
			if !bytes.Equal(got, want) {
				t.Fatalf("ver %d fields %v:\n got %s\nwant %s", ver, fields, got, want)
			}
		}
	}
}
