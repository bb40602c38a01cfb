package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
)

// volumesPath is the Cinder-shaped volume collection of the caller's project.
func (c *apiClient) volumesPath() string {
	return "/volume/v3/" + url.PathEscape(c.project) + "/volumes"
}

// volumeDoc is the part of a Cinder volume body the CLI prints.
type volumeDoc struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Size         int    `json:"size"`
	Status       string `json:"status"`
	Bootable     string `json:"bootable"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
	StatusReason string `json:"ingot:status_reason"`
	Attachments  []struct {
		ServerID string  `json:"server_id"`
		HostName *string `json:"host_name"`
		Device   *string `json:"device"`
	} `json:"attachments"`
}

// server and node of the volume's holder, "" when free.
func (v *volumeDoc) holder() (server, node string) {
	if len(v.Attachments) == 0 {
		return "", ""
	}
	return v.Attachments[0].ServerID, deref(v.Attachments[0].HostName)
}

// imageDoc is a server's image member: {"id": …}, or "" for a server booted
// from a volume (as Nova writes it).
type imageDoc struct{ ID string }

func (i *imageDoc) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil || string(b) == "null" {
		i.ID = ""
		return nil
	}
	var v struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	i.ID = v.ID
	return nil
}

// attachedVolumeDoc is one entry of os-extended-volumes:volumes_attached.
type attachedVolumeDoc struct {
	ID                  string `json:"id"`
	DeleteOnTermination bool   `json:"delete_on_termination"`
}

// volumesLine is how server show lists the server's volumes.
func volumesLine(vols []attachedVolumeDoc) string {
	parts := make([]string, 0, len(vols))
	for _, v := range vols {
		p := v.ID
		if v.DeleteOnTermination {
			p += " (deleted with the server)"
		}
		parts = append(parts, p)
	}
	return dash(strings.Join(parts, ", "))
}

// doJSON sends method path with body (nil: none) and decodes a 2xx answer
// into out (nil: ignore it). A non-2xx answer is an *httpError.
func (c *apiClient) doJSON(cmd *cobra.Command, method, path string, body, out any) error {
	return c.doJSONVersion(cmd, method, path, "", body, out)
}

// doJSONVersion is doJSON with a compute microversion ("" for none).
func (c *apiClient) doJSONVersion(cmd *cobra.Command, method, path, mv string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(cmd.Context(), method, c.root+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if mv != "" {
		req.Header.Set("X-OpenStack-Nova-API-Version", mv)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &httpError{status: resp.StatusCode, message: errorMessage(raw)}
	}
	if out == nil || len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: bad answer: %w", method, path, err)
	}
	return nil
}

// listVolumes reads every page of the volume detail listing.
func (c *apiClient) listVolumes(cmd *cobra.Command) ([]json.RawMessage, error) {
	var all []json.RawMessage
	path := c.volumesPath() + "/detail"
	for pages := 0; path != ""; pages++ {
		if pages > 10000 {
			return nil, fmt.Errorf("volume list: more than 10000 pages, giving up")
		}
		var body struct {
			Volumes []json.RawMessage `json:"volumes"`
			Links   []struct {
				Rel  string `json:"rel"`
				Href string `json:"href"`
			} `json:"volumes_links"`
		}
		if err := c.getJSON(cmd, path, &body); err != nil {
			return nil, err
		}
		all = append(all, body.Volumes...)
		path = ""
		for _, l := range body.Links {
			if u, err := url.Parse(l.Href); l.Rel == "next" && err == nil && len(body.Volumes) > 0 {
				path = u.RequestURI() // on our own root, whatever host the link names
			}
		}
	}
	return all, nil
}

// resolveVolume takes an id or an exact name.
func (c *apiClient) resolveVolume(cmd *cobra.Command, ref string) (string, error) {
	if isServerID(ref) { // a UUID, whatever it names
		return ref, nil
	}
	raws, err := c.listVolumes(cmd)
	if err != nil {
		return "", err
	}
	var ids []string
	for _, raw := range raws {
		var v volumeDoc
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", err
		}
		if v.Name == ref {
			ids = append(ids, v.ID)
		}
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("no volume with id or name %q", ref)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%d volumes are named %q; use an id: %s", len(ids), ref, strings.Join(ids, ", "))
}

func newVolumeCmd(opts *clientOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "volume", Short: "Create, list, show and delete volumes of the embedded registry"}
	cmd.AddCommand(newVolumeCreateCmd(opts), newVolumeListCmd(opts), newVolumeShowCmd(opts), newVolumeDeleteCmd(opts))
	return cmd
}

func newVolumeCreateCmd(opts *clientOptions) *cobra.Command {
	var size int
	cmd := &cobra.Command{
		Use:   "create NAME --size GB",
		Short: "Create a volume",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if size < 1 {
				return fmt.Errorf("--size %d: want a size in GB of at least 1", size)
			}
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			var body struct {
				Volume json.RawMessage `json:"volume"`
			}
			req := map[string]any{"volume": map[string]any{"name": args[0], "size": size}}
			if err := c.doJSON(cmd, http.MethodPost, c.volumesPath(), req, &body); err != nil {
				return err
			}
			return c.printVolume(opts, body.Volume)
		},
	}
	cmd.Flags().IntVar(&size, "size", 0, "size in GB (required)")
	_ = cmd.MarkFlagRequired("size")
	addOutputFlag(cmd, opts)
	return cmd
}

func newVolumeListCmd(opts *clientOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List volumes with their status and holder",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			raws, err := c.listVolumes(cmd)
			if err != nil {
				return err
			}
			if opts.output == "json" {
				return c.printJSON(raws)
			}
			tw := c.table()
			tw.row("ID", "NAME", "SIZE", "STATUS", "SERVER", "NODE")
			for _, raw := range raws {
				var v volumeDoc
				if err := json.Unmarshal(raw, &v); err != nil {
					return err
				}
				server, node := v.holder()
				tw.row(v.ID, dash(v.Name), fmt.Sprintf("%d GB", v.Size), v.Status, dash(server), dash(node))
			}
			return tw.flush()
		},
	}
	addOutputFlag(cmd, opts)
	return cmd
}

func newVolumeShowCmd(opts *clientOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show ID|NAME",
		Short: "Show a volume",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			id, err := c.resolveVolume(cmd, args[0])
			if err != nil {
				return err
			}
			var body struct {
				Volume json.RawMessage `json:"volume"`
			}
			if err := c.getJSON(cmd, c.volumesPath()+"/"+url.PathEscape(id), &body); err != nil {
				return err
			}
			return c.printVolume(opts, body.Volume)
		},
	}
	addOutputFlag(cmd, opts)
	return cmd
}

func newVolumeDeleteCmd(opts *clientOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID|NAME",
		Short: "Delete an available volume",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			id, err := c.resolveVolume(cmd, args[0])
			if err != nil {
				return err
			}
			if err := c.doJSON(cmd, http.MethodDelete, c.volumesPath()+"/"+url.PathEscape(id), nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(c.out, "volume %s deleted\n", id)
			return nil
		},
	}
}

func (c *apiClient) printVolume(opts *clientOptions, raw json.RawMessage) error {
	if opts.output == "json" {
		return c.printJSON(raw)
	}
	var v volumeDoc
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	tw := c.table()
	kv := tw.kv
	kv("id", v.ID)
	kv("name", dash(v.Name))
	kv("size", fmt.Sprintf("%d GB", v.Size))
	kv("status", v.Status)
	if v.StatusReason != "" {
		kv("status_reason", v.StatusReason)
	}
	server, node := v.holder()
	kv("server", dash(server))
	kv("node", dash(node))
	if len(v.Attachments) > 0 {
		kv("device", dash(deref(v.Attachments[0].Device)))
	}
	kv("bootable", v.Bootable)
	kv("created", v.CreatedAt)
	kv("updated", dash(v.UpdatedAt))
	return tw.flush()
}
