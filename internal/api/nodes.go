package api

import (
	"fmt"
	"net/http"

	"github.com/ingot-dev/ingot/internal/ironic"
)

type nodeView struct {
	UUID                 string  `json:"uuid"`
	Name                 string  `json:"name"`
	ProvisionState       string  `json:"provision_state"`
	TargetProvisionState *string `json:"target_provision_state"`
	PowerState           *string `json:"power_state"`
	Maintenance          bool    `json:"maintenance"`
	MaintenanceReason    *string `json:"maintenance_reason"`
	InstanceUUID         *string `json:"instance_uuid"`
	ResourceClass        string  `json:"resource_class"`
	LastError            *string `json:"last_error"`
	// ServerID is the ingot server holding the node according to ingot's
	// records (null when none); compare with instance_uuid to spot drift.
	ServerID *string `json:"server_id"`
	// Traits are the node's Ironic traits (the console shows them).
	Traits []string `json:"traits"`
}

// listNodes answers GET /ingot/v1/nodes: Ironic's inventory joined with
// which server holds each node.
func (s *server) listNodes(w http.ResponseWriter, r *request) error {
	var nodes []ironic.Node
	if s.cfg.Nodes != nil {
		var err error
		if nodes, err = s.cfg.Nodes(r.Context()); err != nil {
			return unavailable("Ironic node inventory unavailable: %v", err)
		}
	}
	holders, err := s.cfg.Store.NodeHolders(r.Context())
	if err != nil {
		return fmt.Errorf("node holders: %w", err)
	}
	out := make([]nodeView, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, nodeView{
			UUID: n.UUID, Name: n.Name, ProvisionState: n.ProvisionState,
			TargetProvisionState: strPtr(n.TargetProvisionState), PowerState: strPtr(n.PowerState),
			Maintenance: n.Maintenance, MaintenanceReason: strPtr(n.MaintenanceReason),
			InstanceUUID: strPtr(n.InstanceUUID), ResourceClass: n.ResourceClass,
			LastError: strPtr(n.LastError), ServerID: strPtr(holders[n.UUID]),
			Traits: append([]string{}, n.Traits...),
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"nodes": out})
	return nil
}
