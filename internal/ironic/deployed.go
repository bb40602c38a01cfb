package ironic

import (
	"context"
	"net/url"
)

// deployedFields is what adoption reads of a node that carries an instance.
var deployedFields = nodeFields + ",instance_info,lessee"

// Deployed is a node that carries an instance_uuid, with its instance_info
// (Ironic masks its secrets, the config drive among them, unless its
// show_instance_secrets policy lets the caller see them).
type Deployed struct {
	Node
	InstanceInfo map[string]any
	// Lessee is the project the node is leased to ("" when none).
	Lessee string
}

type rawDeployed struct {
	rawNode
	InstanceInfo map[string]any `json:"instance_info"`
	Lessee       string         `json:"lessee"`
}

// ListDeployed returns every node that carries an instance_uuid (anyone's),
// with its instance_info: what `ingot adopt --from-ironic` reads. Read only.
func (c *Client) ListDeployed(ctx context.Context) ([]Deployed, error) {
	q := url.Values{}
	q.Set("associated", "True")
	q.Set("fields", deployedFields)
	raws, err := listAll[rawDeployed](ctx, c, "node.list", "nodes", q)
	if err != nil {
		return nil, err
	}
	out := make([]Deployed, 0, len(raws))
	for _, r := range raws {
		out = append(out, Deployed{Node: r.node(), InstanceInfo: r.InstanceInfo, Lessee: r.Lessee})
	}
	return out, nil
}
