package api

import (
	"fmt"
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
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
func (s *Service) listNodes(w http.ResponseWriter, r *core.Request) error {
	var nodes []ironic.Node
	if s.Cfg.Nodes != nil {
		var err error
		if nodes, err = s.Cfg.Nodes(r.Context()); err != nil {
			return core.Unavailable("Ironic node inventory unavailable: %v", err)
		}
	}
	holders, err := s.Cfg.Store.NodeHolders(r.Context())
	if err != nil {
		return fmt.Errorf("node holders: %w", err)
	}
	out := make([]nodeView, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, nodeView{
			UUID: n.UUID, Name: n.Name, ProvisionState: n.ProvisionState,
			TargetProvisionState: core.StrPtr(n.TargetProvisionState), PowerState: core.StrPtr(n.PowerState),
			Maintenance: n.Maintenance, MaintenanceReason: core.StrPtr(n.MaintenanceReason),
			InstanceUUID: core.StrPtr(n.InstanceUUID), ResourceClass: n.ResourceClass,
			LastError: core.StrPtr(n.LastError), ServerID: core.StrPtr(holders[n.UUID]),
			Traits: append([]string{}, n.Traits...),
		})
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Nodes []nodeView `json:"nodes"`
	}{out})
	return nil
}
