package ironic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// viewFields is what the per-tick bulk view asks for: Node without Traits,
// which cost Ironic a join per node and which the reconciler does not need.
var viewFields = strings.Join([]string{
	"uuid", "name", "instance_uuid", "provision_state", "target_provision_state", "power_state", "target_power_state",
	"maintenance", "maintenance_reason", "last_error", "reservation", "resource_class",
	"provision_updated_at",
}, ",")

// nodeFields is exactly what Node holds (traits are accepted in fields at
// 1.78, checked against Ironic 21.4): for scheduling, the inventory and GetNode.
var nodeFields = viewFields + ",traits"

// inventoryFields adds properties (for properties.capabilities) to what the
// scheduler lists.
var inventoryFields = nodeFields + ",properties"

// rawNode is a node as Ironic sends it. encoding/json leaves a string field
// "" on JSON null, which is what Node promises for null strings.
type rawNode struct {
	UUID                 string   `json:"uuid"`
	Name                 string   `json:"name"`
	InstanceUUID         string   `json:"instance_uuid"`
	ProvisionState       string   `json:"provision_state"`
	TargetProvisionState string   `json:"target_provision_state"`
	PowerState           string   `json:"power_state"`
	TargetPowerState     string   `json:"target_power_state"`
	Maintenance          bool     `json:"maintenance"`
	MaintenanceReason    string   `json:"maintenance_reason"`
	LastError            string   `json:"last_error"`
	Reservation          string   `json:"reservation"`
	ResourceClass        string   `json:"resource_class"`
	Traits               []string `json:"traits"`
	ProvisionUpdatedAt   string   `json:"provision_updated_at"`
	// Only capabilities is read of properties: a struct skips the other
	// keys (cpus, memory_mb, …) where a map decoded each, for every node
	// of every inventory listing.
	Properties struct {
		Capabilities any `json:"capabilities"`
	} `json:"properties"`
}

func (r rawNode) node() Node {
	return Node{
		UUID:                 r.UUID,
		Name:                 r.Name,
		InstanceUUID:         r.InstanceUUID,
		ProvisionState:       r.ProvisionState,
		TargetProvisionState: r.TargetProvisionState,
		PowerState:           r.PowerState,
		TargetPowerState:     r.TargetPowerState,
		Maintenance:          r.Maintenance,
		MaintenanceReason:    r.MaintenanceReason,
		LastError:            r.LastError,
		Reservation:          r.Reservation,
		ResourceClass:        r.ResourceClass,
		Traits:               r.Traits,
		ProvisionUpdatedAt:   parseTime(r.ProvisionUpdatedAt),
		Capabilities:         parseCapabilities(r.Properties.Capabilities),
	}
}

// parseCapabilities reads properties.capabilities, "key:value,key:value"
// as Ironic keeps it (or an object, which Ironic also accepts). Malformed
// entries are skipped: one odd node must not fail the inventory.
func parseCapabilities(v any) map[string]string {
	var out map[string]string
	set := func(k, val string) {
		k = strings.TrimSpace(k)
		if k == "" {
			return
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = strings.TrimSpace(val)
	}
	switch c := v.(type) {
	case string:
		for _, kv := range strings.Split(c, ",") {
			if k, val, ok := strings.Cut(kv, ":"); ok {
				set(k, val)
			}
		}
	case map[string]any:
		for k, val := range c {
			if s, ok := val.(string); ok {
				set(k, s)
			} else {
				set(k, fmt.Sprint(val))
			}
		}
	}
	return out
}

// parseTime reads Ironic's timestamps ("2026-11-30T01:46:44.567001+00:00").
// An unparseable or null value gives the zero time rather than an error: one
// odd timestamp must not fail the whole bulk view of a reconcile tick.
func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02 15:04:05.999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// ListAssociated returns every node that carries an instance_uuid (anyone's):
// the reconciler's per-tick bulk view, with Traits left out (nil). It costs
// ⌈N/PageSize⌉ requests for N associated nodes, one more when N is an exact
// multiple of PageSize (Ironic adds a next link to a full page, and only the
// empty page after it tells the end).
func (c *Client) ListAssociated(ctx context.Context) ([]Node, error) {
	q := url.Values{}
	q.Set("associated", "True")
	return c.listNodes(ctx, q, viewFields)
}

// ListInState returns every node in provisionState, with the bulk view's
// fields: the fast tick's look at several nodes waiting in one state.
func (c *Client) ListInState(ctx context.Context, provisionState string) ([]Node, error) {
	q := url.Values{}
	q.Set("provision_state", provisionState)
	return c.listNodes(ctx, q, viewFields)
}

// ListAvailable returns the scheduling candidates: available, not associated,
// not in maintenance, of resourceClass ("" = any class).
func (c *Client) ListAvailable(ctx context.Context, resourceClass string) ([]Node, error) {
	q := url.Values{}
	q.Set("provision_state", StateAvailable)
	q.Set("associated", "False")
	q.Set("maintenance", "False")
	if resourceClass != "" {
		q.Set("resource_class", resourceClass)
	}
	return c.listNodes(ctx, q, inventoryFields)
}

// ListClass returns every node of resourceClass, whatever its state (the
// scheduler counts those on their way back when none is available).
func (c *Client) ListClass(ctx context.Context, resourceClass string) ([]Node, error) {
	q := url.Values{}
	q.Set("resource_class", resourceClass)
	return c.listNodes(ctx, q, viewFields)
}

// ListNodes returns every node (the inventory, for `ingot node list`).
func (c *Client) ListNodes(ctx context.Context) ([]Node, error) {
	return c.listNodes(ctx, url.Values{}, inventoryFields)
}

// listNodes pages through GET /v1/nodes with the filters in q.
func (c *Client) listNodes(ctx context.Context, filters url.Values, fields string) ([]Node, error) {
	q := url.Values{}
	for k, v := range filters {
		q[k] = v
	}
	q.Set("fields", fields)
	raws, err := listAll[rawNode](ctx, c, "node.list", "nodes", q)
	if err != nil {
		return nil, err
	}
	out := make([]Node, 0, len(raws))
	for _, r := range raws {
		out = append(out, r.node())
	}
	return out, nil
}

// listAll pages through GET /v1/<resource>?<filters>, collecting the items
// under the JSON key named like the resource's last path element.
//
// NOTE: Ironic 21.4 drops most filters (associated=False, maintenance=False,
// provision_state, resource_class, …) from the `next` link it returns
// (docs/ironic.md §11, filtered pagination), and
// gophercloud's pager follows `next` as given, so a filtered list longer than
// one page would silently return unfiltered items. We therefore take only
// Ironic's paging parameters (marker, sort) from `next` and rebuild the
// request on our own endpoint with the original filters. Using our endpoint
// rather than next's host also survives a proxy that rewrites the host.
func listAll[T any](ctx context.Context, c *Client, op, resource string, filters url.Values) ([]T, error) {
	// NOTE: a page whose marker is an item deleted since the previous page
	// answers 404 ("Node <marker> could not be found", measured on Ironic
	// 21.4), so a deletion during a multi-page walk restarts the walk.
	for attempt := 0; ; attempt++ {
		out, err := listPages[T](ctx, c, op, resource, filters)
		if errors.Is(err, errMarkerGone) && attempt < 3 {
			continue
		}
		if errors.Is(err, errMarkerGone) {
			return nil, fmt.Errorf("%w: %s: items keep vanishing under the pager", ErrUnavailable, resource)
		}
		return out, err
	}
}

// errMarkerGone: the page after a marker answered 404 (the marker item was deleted).
var errMarkerGone = errors.New("ironic: list marker vanished")

func listPages[T any](ctx context.Context, c *Client, op, resource string, filters url.Values) ([]T, error) {
	key := resource[strings.LastIndex(resource, "/")+1:]
	base := c.sc.ServiceURL(resource)
	orig := url.Values{}
	for k, v := range filters {
		orig[k] = v
	}
	orig.Set("limit", strconv.Itoa(c.pageSize))
	query := orig

	var out []T
	seen := map[string]bool{}
	for page := 1; ; page++ {
		var body map[string]json.RawMessage
		reqURL := base + "?" + query.Encode()
		action := fmt.Sprintf("GET %s page %d", resource, page)
		var items []T
		var next string
		err := c.do(ctx, op, action, func(ctx context.Context) error {
			if _, err := c.sc.Get(ctx, reqURL, &body, &gophercloud.RequestOpts{OkCodes: []int{200}}); err != nil {
				return err
			}
			if raw, ok := body[key]; ok {
				if err := json.Unmarshal(raw, &items); err != nil {
					return fmt.Errorf("decode %s: %w", key, err)
				}
			}
			if raw, ok := body["next"]; ok {
				if err := json.Unmarshal(raw, &next); err != nil {
					return fmt.Errorf("decode next: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			if page > 1 && errors.Is(err, ErrNotFound) {
				return nil, errMarkerGone
			}
			return nil, err
		}
		out = append(out, items...)
		if next == "" || len(items) == 0 {
			return out, nil
		}
		nextURL, err := url.Parse(next)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: bad next link %q: %v", ErrUnavailable, action, next, err)
		}
		nq := nextURL.Query()
		marker := nq.Get("marker")
		if marker == "" || seen[marker] {
			// A next link that does not advance would loop forever.
			return nil, fmt.Errorf("%w: %s: next link does not advance: %q", ErrUnavailable, action, next)
		}
		seen[marker] = true
		// Ironic's paging parameters from next, then the original query on top.
		for k, v := range orig {
			nq[k] = v
		}
		query = nq
	}
}

// GetNode returns one node by UUID or name. A missing node is ErrNotFound.
func (c *Client) GetNode(ctx context.Context, id string) (Node, error) {
	var r rawNode
	err := c.do(ctx, "node.get", "GET node "+id, func(ctx context.Context) error {
		u := c.sc.ServiceURL("nodes", url.PathEscape(id)) + "?fields=" + nodeFields
		_, err := c.sc.Get(ctx, u, &r, &gophercloud.RequestOpts{OkCodes: []int{200}})
		return err
	})
	if err != nil {
		return Node{}, err
	}
	return r.node(), nil
}

// patchOp is one JSON-patch operation. Unlike gophercloud's UpdateOperation it
// can carry an explicit null value; Value is omitted only for "remove".
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// patchNode sends one PATCH and decodes the node Ironic answers with.
func (c *Client) patchNode(ctx context.Context, nodeID string, ops []patchOp) (Node, error) {
	var r rawNode
	err := c.do(ctx, "node.patch", "PATCH node "+nodeID, func(ctx context.Context) error {
		_, err := c.sc.Patch(ctx, c.sc.ServiceURL("nodes", url.PathEscape(nodeID)), ops, &r,
			&gophercloud.RequestOpts{OkCodes: []int{200}})
		return err
	})
	if err != nil {
		return Node{}, err
	}
	return r.node(), nil
}

// Reserve associates nodeID with instanceUUID (PATCH add /instance_uuid) and
// returns the node as Ironic answered; the keys of info (nil values left
// out) go into instance_info in the same PATCH, as Nova's driver sends them,
// so the deploy needs no PATCH of its own. Idempotent: reserving a node again
// for the same instance succeeds (Ironic answers 200 again). Errors: the node holds
// another instance → ErrNodeAssociated; the instance sits on another node →
// ErrInstanceAssociated; node busy → ErrNodeLocked; node gone → ErrNotFound.
// NOTE: the returned node's Reservation is the conductor lock taken for this
// PATCH itself (the real Ironic answers "localhost"), not a sign of a busy node.
func (c *Client) Reserve(ctx context.Context, nodeID, instanceUUID string, info map[string]any) (Node, error) {
	ops, err := instanceInfoOps(nil, info)
	if err != nil {
		return Node{}, fmt.Errorf("%w: reserve node %s: %v", ErrInvalid, nodeID, err)
	}
	return c.patchNode(ctx, nodeID, append([]patchOp{{Op: "add", Path: "/instance_uuid", Value: instanceUUID}}, ops...))
}

// Unreserve removes instance_uuid and instance_info from the node in one
// PATCH. Repeatable: Ironic answers 200 when they are already absent. The
// caller must have checked that the reservation is its own (I7): Ironic does
// not protect a node reserved by someone else, nor an active node
// (docs/ironic.md §11) — undeploy first. A deleted node is ErrNotFound.
func (c *Client) Unreserve(ctx context.Context, nodeID string) error {
	_, err := c.patchNode(ctx, nodeID, []patchOp{
		{Op: "remove", Path: "/instance_uuid"},
		{Op: "remove", Path: "/instance_info"},
	})
	return err
}

// SetStorageInterface sets the node's storage_interface (e.g. "external" to
// boot from a volume target, "noop" for none). Idempotent.
func (c *Client) SetStorageInterface(ctx context.Context, nodeID, iface string) error {
	_, err := c.patchNode(ctx, nodeID, []patchOp{{Op: "replace", Path: "/storage_interface", Value: iface}})
	return err
}
