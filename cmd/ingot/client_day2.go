package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/ingot-dev/ingot/internal/safetext"
	"github.com/spf13/cobra"
)

// The day-2 commands: reboot, stop, start, rebuild, rescue, unrescue, lock,
// unlock. Each sends Nova's server action; with --wait it follows the
// server until the operation is over (no task left), as create --wait does.

// day2Op is one command: what it sends and the status it ends in.
type day2Op struct {
	use, short string
	want       string // the status the server rests in once done
	flags      func(cmd *cobra.Command)
	send       func(cmd *cobra.Command, c *apiClient, id string) error
}

func newDay2Cmds(opts *clientOptions) []*cobra.Command {
	var hard bool
	var image, password, reason string
	ops := []day2Op{
		{use: "reboot", short: "Reboot a server (soft; --hard for a power cycle)", want: "ACTIVE",
			flags: func(cmd *cobra.Command) {
				cmd.Flags().BoolVar(&hard, "hard", false, "power-cycle the node instead of a soft reboot")
			},
			send: func(cmd *cobra.Command, c *apiClient, id string) error {
				t := servers.SoftReboot
				if hard {
					t = servers.HardReboot
				}
				return servers.Reboot(cmd.Context(), c.compute, id, servers.RebootOpts{Type: t}).ExtractErr()
			}},
		{use: "stop", short: "Power a server off (SHUTOFF)", want: "SHUTOFF",
			send: func(cmd *cobra.Command, c *apiClient, id string) error {
				return servers.Stop(cmd.Context(), c.compute, id).ExtractErr()
			}},
		{use: "start", short: "Power a stopped server on (ACTIVE)", want: "ACTIVE",
			send: func(cmd *cobra.Command, c *apiClient, id string) error {
				return servers.Start(cmd.Context(), c.compute, id).ExtractErr()
			}},
		{use: "rebuild", short: "Redeploy a server's node with an image (default: its current one); same node, same addresses", want: "",
			flags: func(cmd *cobra.Command) {
				cmd.Flags().StringVar(&image, "image", "", "image id or name (default: the server's image)")
			},
			send: func(cmd *cobra.Command, c *apiClient, id string) error {
				ref := image
				if ref == "" {
					s, _, err := c.getServer(cmd, id)
					if err != nil {
						return err
					}
					ref = s.Image.ID
				}
				imgID, err := c.resolveImage(cmd, ref)
				if err != nil {
					return err
				}
				return servers.Rebuild(cmd.Context(), c.compute, id, servers.RebuildOpts{ImageRef: imgID}).Err
			}},
		{use: "rescue", short: "Boot a server's node into Ironic's rescue ramdisk (RESCUE); prints the password", want: "RESCUE",
			flags: func(cmd *cobra.Command) {
				cmd.Flags().StringVar(&password, "password", "", "the rescue password (default: one is generated)")
			},
			send: func(cmd *cobra.Command, c *apiClient, id string) error {
				var out struct {
					AdminPass string `json:"adminPass"`
				}
				if err := servers.Rescue(cmd.Context(), c.compute, id, servers.RescueOpts{AdminPass: password}).ExtractInto(&out); err != nil {
					return err
				}
				if out.AdminPass != "" {
					fmt.Fprintf(c.out, "rescue password: %s\n", out.AdminPass)
				}
				return nil
			}},
		{use: "unrescue", short: "Take a server out of rescue (ACTIVE)", want: "ACTIVE",
			send: func(cmd *cobra.Command, c *apiClient, id string) error {
				return servers.Unrescue(cmd.Context(), c.compute, id).ExtractErr()
			}},
		{use: "lock", short: "Lock a server: actions and deletes are refused to non-admins", want: "",
			flags: func(cmd *cobra.Command) { cmd.Flags().StringVar(&reason, "reason", "", "why (shown as locked_reason)") },
			send: func(cmd *cobra.Command, c *apiClient, id string) error {
				var lock any
				if reason != "" {
					lock = map[string]string{"locked_reason": reason}
				}
				return c.action(cmd, id, map[string]any{"lock": lock})
			}},
		{use: "unlock", short: "Unlock a server", want: "",
			send: func(cmd *cobra.Command, c *apiClient, id string) error {
				return servers.Unlock(cmd.Context(), c.compute, id).ExtractErr()
			}},
	}
	var out []*cobra.Command
	for _, op := range ops {
		out = append(out, op.command(opts))
	}
	return out
}

func (op day2Op) command(opts *clientOptions) *cobra.Command {
	var wait bool
	cmd := &cobra.Command{
		Use:   op.use + " ID|NAME",
		Short: op.short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			id, err := c.resolveServer(cmd, args[0])
			if err != nil {
				return err
			}
			if err := op.send(cmd, c, id); err != nil {
				return friendly(err)
			}
			if !wait || op.use == "lock" || op.use == "unlock" {
				// A lock is in force once the API answers: nothing to wait for.
				fmt.Fprintf(c.out, "server %s: %s accepted\n", id, op.use)
				return nil
			}
			fmt.Fprintf(c.out, "server %s: %s accepted; waiting for it to finish\n", id, op.use)
			return c.waitOp(cmd, id, op.use, op.want)
		},
	}
	if op.flags != nil {
		op.flags(cmd)
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the operation is over (exit non-zero on ERROR or if the server ends elsewhere)")
	return cmd
}

// errOpFailed: a waited-for operation ended in ERROR, or not where it should.
var errOpFailed = errors.New("operation failed")

// waitOp polls the server, printing each change of status, task, phase or
// node, until no task is left: the operation is over. want "" accepts
// ACTIVE or SHUTOFF (a rebuild ends as it started). The service bounds
// every operation by its deadline, so there is no client timeout.
func (c *apiClient) waitOp(cmd *cobra.Command, id, what, want string) error {
	start := time.Now()
	tick := time.NewTicker(c.pollEvery)
	defer tick.Stop()
	last, lastErr := "", ""
	for {
		s, _, err := c.getServer(cmd, id)
		switch {
		case statusOf(err) == http.StatusNotFound:
			return fmt.Errorf("server %s was deleted during the %s", id, what)
		case err != nil && !retryable(err):
			return err
		case err != nil:
			if err.Error() != lastErr {
				fmt.Fprintf(c.errOut, "[%5.0fs] (retrying: %v)\n", time.Since(start).Seconds(), err)
				lastErr = err.Error()
			}
		default:
			lastErr = ""
			state := fmt.Sprintf("%-11s task=%-16s phase=%-12s node=%s", s.Status, dash(deref(s.TaskState)), dash(s.Phase), dash(deref(s.Node)))
			if state != last {
				fmt.Fprintf(c.out, "[%5.0fs] %s\n", time.Since(start).Seconds(), safetext.Escape(state))
				last = state
			}
			switch {
			case deleting(s):
				return fmt.Errorf("server %s is being deleted", id)
			case s.Status == "ERROR":
				c.printFault(s)
				return fmt.Errorf("server %s: %s: %w", id, what, errOpFailed)
			case s.TaskState != nil:
			case s.Status == want || (want == "" && (s.Status == "ACTIVE" || s.Status == "SHUTOFF")):
				fmt.Fprintf(c.out, "server %s is %s after %s\n", id, s.Status, time.Since(start).Round(time.Second))
				return nil
			default:
				return fmt.Errorf("server %s: the %s ended with the server %s, not %s (see ingot server events %s): %w",
					id, what, s.Status, want, id, errOpFailed)
			}
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-tick.C:
		}
	}
}

// action POSTs a server action body and expects a 2xx.
func (c *apiClient) action(cmd *cobra.Command, id string, body any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(cmd.Context(), http.MethodPost, c.root+"/v2.1/servers/"+id+"/action", bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Nova-API-Version", clientMicroversion)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("POST action: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return &httpError{status: resp.StatusCode, message: errorMessage(msg)}
	}
	return nil
}

// resolveImage maps an image name to its id through the Glance-shaped look-up.
func (c *apiClient) resolveImage(cmd *cobra.Command, ref string) (string, error) {
	if len(ref) == 36 && uuid.Validate(ref) == nil {
		return ref, nil
	}
	if ref == "" {
		return "", errors.New("the server has no image (booted from a volume): give --image")
	}
	var body struct {
		Images []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"images"`
	}
	if err := c.getJSON(cmd, "/image/v2/images?name="+url.QueryEscape(ref), &body); err != nil {
		return "", fmt.Errorf("image %q: %w", ref, err)
	}
	switch len(body.Images) {
	case 0:
		return "", fmt.Errorf("no image with id or name %q", ref)
	case 1:
		return body.Images[0].ID, nil
	}
	return "", fmt.Errorf("more than one image is named %q; use an id", ref)
}
