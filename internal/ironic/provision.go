package ironic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
)

// Deploy sets the node's instance_info and asks Ironic to deploy it
// (provision target "active") with req.ConfigDrive as a JSON config drive.
//
// instance_info is merged: only keys of req.InstanceInfo whose value differs
// from the node's current instance_info are patched ("diff before you PATCH");
// keys the node has and req does not are left alone; a nil value removes the
// key. When nothing differs, or req.InstanceInfoSet, no PATCH is sent.
// Calls: (GET) + (PATCH) + PUT.
//
// Not idempotent at Ironic: a second Deploy on a node that is already
// deploying or active fails (ErrNodeLocked while Ironic holds the node's lock,
// ErrInvalidState once it is active), so the caller decides from its view of
// the node whether a deploy is still needed. A node in the wrong state or in
// maintenance is ErrInvalidState.
func (c *Client) Deploy(ctx context.Context, nodeID string, req DeployRequest) error {
	return c.deploy(ctx, nodeID, nodes.TargetActive, req)
}

// deploy merges instance_info, then asks for target (active or rebuild).
func (c *Client) deploy(ctx context.Context, nodeID string, target nodes.TargetProvisionState, req DeployRequest) error {
	var current struct {
		InstanceInfo map[string]any `json:"instance_info"`
	}
	// The node's instance_info is read only when a key is to be removed
	// (JSON patch refuses to remove an absent member); otherwise every key
	// is set with "add", which replaces, so a repeated deploy sends the same
	// PATCH and a build saves the GET.
	if req.InstanceInfoSet {
		req.InstanceInfo = nil
	}
	if slices.ContainsFunc(slices.Collect(maps.Values(req.InstanceInfo)), func(v any) bool { return v == nil }) {
		err := c.do(ctx, "node.get", "GET node "+nodeID+" instance_info", func(ctx context.Context) error {
			u := c.sc.ServiceURL("nodes", url.PathEscape(nodeID)) + "?fields=instance_info"
			_, err := c.sc.Get(ctx, u, &current, &gophercloud.RequestOpts{OkCodes: []int{200}})
			return err
		})
		if err != nil {
			return err
		}
	}
	ops, err := instanceInfoOps(current.InstanceInfo, req.InstanceInfo)
	if err != nil {
		return fmt.Errorf("%w: deploy node %s: %v", ErrInvalid, nodeID, err)
	}
	if len(ops) > 0 {
		if _, err := c.patchNode(ctx, nodeID, ops); err != nil {
			return err
		}
	}
	opts := nodes.ProvisionStateOpts{Target: target}
	switch {
	case req.ConfigDriveImage != "":
		opts.ConfigDrive = req.ConfigDriveImage
	case req.ConfigDrive != nil:
		// NOTE: a JSON config drive needs microversion >= 1.56 (docs/ironic.md §6).
		opts.ConfigDrive = req.ConfigDrive
	}
	return c.provision(ctx, nodeID, opts)
}

// Undeploy asks Ironic to tear the node down (provision target "deleted").
// Ironic then clears instance_uuid and instance_info and detaches VIFs at
// the end of the teardown (docs/ironic.md §10). Not idempotent at Ironic: on
// an available node it is ErrInvalidState, while the node is locked (e.g.
// still deploying) ErrNodeLocked.
func (c *Client) Undeploy(ctx context.Context, nodeID string) error {
	return c.provision(ctx, nodeID, nodes.ProvisionStateOpts{Target: nodes.TargetDeleted})
}

func (c *Client) provision(ctx context.Context, nodeID string, opts nodes.ProvisionStateOpts) error {
	action := fmt.Sprintf("PUT node %s provision %s", nodeID, opts.Target)
	return c.do(ctx, "node.provision", action, func(ctx context.Context) error {
		return nodes.ChangeProvisionState(ctx, c.sc, nodeID, opts).ExtractErr()
	})
}

// SetPowerOff asks Ironic to power the node off (asynchronous: Ironic answers
// 202; poll power_state). Needed before volume targets can be deleted.
// Repeatable on a node that is already off.
func (c *Client) SetPowerOff(ctx context.Context, nodeID string) error {
	return c.power(ctx, nodeID, nodes.PowerOff)
}

// instanceInfoOps returns the JSON-patch operations that bring the keys of
// want into current, in key order (deterministic requests). Values are
// compared by their canonical JSON, so 10 and 10.0, or a json.Number and an
// int, are equal.
func instanceInfoOps(current, want map[string]any) ([]patchOp, error) {
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ops []patchOp
	for _, k := range keys {
		path := "/instance_info/" + escapePointer(k)
		have, present := current[k]
		v := want[k]
		if v == nil {
			if present {
				ops = append(ops, patchOp{Op: "remove", Path: path})
			}
			continue
		}
		if present {
			same, err := jsonEqual(have, v)
			if err != nil {
				return nil, fmt.Errorf("instance_info key %q: %w", k, err)
			}
			if same {
				continue
			}
		} else if _, err := json.Marshal(v); err != nil {
			return nil, fmt.Errorf("instance_info key %q: %w", k, err)
		}
		// "add" on an existing member replaces it (RFC 6902 §4.1).
		ops = append(ops, patchOp{Op: "add", Path: path, Value: v})
	}
	return ops, nil
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

func jsonEqual(a, b any) (bool, error) {
	ca, err := canonicalJSON(a)
	if err != nil {
		return false, err
	}
	cb, err := canonicalJSON(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(ca, cb), nil
}

// canonicalJSON encodes v, decodes it generically and encodes it again:
// numbers become float64 and map keys come out sorted.
func canonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return nil, err
	}
	return json.Marshal(generic)
}
