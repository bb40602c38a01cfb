package main

import (
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/instanceactions"
	"github.com/spf13/cobra"
)

type actionDoc struct {
	Action    string     `json:"action"`
	RequestID string     `json:"request_id"`
	StartTime string     `json:"start_time"`
	UpdatedAt *string    `json:"updated_at"`
	Message   *string    `json:"message"`
	Events    []eventDoc `json:"events"`
}

type eventDoc struct {
	Event      string  `json:"event"`
	StartTime  *string `json:"start_time"`
	FinishTime *string `json:"finish_time"`
	Result     *string `json:"result"`
	Host       *string `json:"host"`
	Details    *string `json:"details"`
}

func newServerEventsCmd(opts *clientOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "events ID|NAME",
		Short: "Show a server's actions (create, delete) and their events; works for deleted servers",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			id, err := c.resolveServerOrDeleted(cmd, args[0])
			if err != nil {
				return err
			}
			actions, err := c.actions(cmd, id)
			if err != nil {
				return err
			}
			if opts.output == "json" {
				return c.printJSON(actions)
			}
			tw := c.table()
			for i, a := range actions {
				if i > 0 {
					tw.blank()
				}
				tw.row(a.Action, a.RequestID, "started "+a.StartTime, deref(a.Message))
				for _, e := range a.Events {
					tw.row("  "+e.Event, dash(deref(e.Result)), timeOfDay(deref(e.StartTime))+" → "+timeOfDay(deref(e.FinishTime)),
						"node "+dash(deref(e.Host)), deref(e.Details))
				}
			}
			return tw.flush()
		},
	}
	addOutputFlag(cmd, opts)
	return cmd
}

// actions lists a server's actions (gophercloud), oldest first, each with
// its events (plain GET: gophercloud's Event has no details member).
func (c *apiClient) actions(cmd *cobra.Command, id string) ([]actionDoc, error) {
	pages, err := instanceactions.List(c.compute, id, nil).AllPages(cmd.Context())
	if err != nil {
		return nil, friendly(err)
	}
	list, err := instanceactions.ExtractInstanceActions(pages)
	if err != nil {
		return nil, err
	}
	out := make([]actionDoc, 0, len(list))
	for i := len(list) - 1; i >= 0; i-- { // the API lists newest first
		var body struct {
			InstanceAction actionDoc `json:"instanceAction"`
		}
		path := fmt.Sprintf("/v2.1/servers/%s/os-instance-actions/%s", url.PathEscape(id), url.PathEscape(list[i].RequestID))
		if err := c.getJSON(cmd, path, &body); err != nil {
			return nil, fmt.Errorf("action %s: %w", list[i].RequestID, err)
		}
		if body.InstanceAction.Events == nil {
			body.InstanceAction.Events = []eventDoc{}
		}
		out = append(out, body.InstanceAction)
	}
	return out, nil
}

// isServerID reports whether ref looks like a server id. A deleted server
// can no longer be found by name, but its events are still served by id.
func isServerID(ref string) bool {
	return len(ref) == 36 && uuid.Validate(ref) == nil
}

// timeOfDay shortens an event time to the time of day (the action line gives
// the date); "-" while an event has not finished.
func timeOfDay(s string) string {
	t, err := time.Parse("2006-01-02T15:04:05.000000", s)
	if err != nil {
		return dash(s)
	}
	return t.Format("15:04:05.000")
}
