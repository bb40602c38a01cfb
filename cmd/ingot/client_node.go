package main

import (
	"github.com/spf13/cobra"
)

type nodeDoc struct {
	UUID                 string  `json:"uuid"`
	Name                 string  `json:"name"`
	ProvisionState       string  `json:"provision_state"`
	TargetProvisionState *string `json:"target_provision_state"`
	PowerState           *string `json:"power_state"`
	Maintenance          bool    `json:"maintenance"`
	InstanceUUID         *string `json:"instance_uuid"`
	ResourceClass        string  `json:"resource_class"`
	LastError            *string `json:"last_error"`
	ServerID             *string `json:"server_id"`
}

func newNodeCmd(opts *clientOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "node", Short: "Ironic nodes as ingot sees them"}
	list := &cobra.Command{
		Use:   "list",
		Short: "List Ironic's nodes and the server holding each",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			var body struct {
				Nodes []nodeDoc `json:"nodes"`
			}
			if err := c.getJSON(cmd, "/ingot/v1/nodes", &body); err != nil {
				return err
			}
			if opts.output == "json" {
				return c.printJSON(body.Nodes)
			}
			tw := c.table()
			tw.row("UUID", "NAME", "PROVISION STATE", "POWER", "MAINT", "RESOURCE CLASS", "INSTANCE", "SERVER", "LAST ERROR")
			for _, n := range body.Nodes {
				state := n.ProvisionState
				if t := deref(n.TargetProvisionState); t != "" {
					state += " → " + t
				}
				maint := "-"
				if n.Maintenance {
					maint = "yes"
				}
				lastErr := deref(n.LastError)
				if r := []rune(lastErr); len(r) > 60 {
					lastErr = string(r[:57]) + "..."
				}
				tw.row(n.UUID, dash(n.Name), state, dash(deref(n.PowerState)), maint,
					dash(n.ResourceClass), dash(deref(n.InstanceUUID)), dash(deref(n.ServerID)), dash(lastErr))
			}
			return tw.flush()
		},
	}
	addOutputFlag(list, opts)
	cmd.AddCommand(list)
	return cmd
}
