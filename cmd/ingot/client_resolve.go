package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/spf13/cobra"
)

// Names to ids (servers, networks) and ids to names (images), as the
// OpenStack CLI resolves them.

// errNoServer: no live server has the name.
var errNoServer = errors.New("no server")

// resolveServer takes an id or an exact name, as the OpenStack CLI does.
func (c *apiClient) resolveServer(cmd *cobra.Command, ref string) (string, error) {
	if isServerID(ref) {
		return ref, nil
	}
	ids, err := c.serversNamed(cmd, servers.ListOpts{Name: ref}, ref)
	if err != nil {
		return "", err
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("%w with id or name %q", errNoServer, ref)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%d servers are named %q; use an id: %s", len(ids), ref, strings.Join(ids, ", "))
}

// resolveServerOrDeleted is resolveServer that also finds a deleted
// server by its name: Nova's changes-since listing still shows it (status
// DELETED), and its actions are still served by id.
func (c *apiClient) resolveServerOrDeleted(cmd *cobra.Command, ref string) (string, error) {
	id, err := c.resolveServer(cmd, ref)
	if !errors.Is(err, errNoServer) {
		return id, err
	}
	ids, err := c.serversNamed(cmd, servers.ListOpts{Name: ref, ChangesSince: "1970-01-01T00:00:00Z", Status: "DELETED"}, ref)
	if err != nil {
		return "", err
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("no server, live or deleted, with id or name %q", ref)
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%d deleted servers were named %q; use an id: %s", len(ids), ref, strings.Join(ids, ", "))
}

// serversNamed lists the ids of the servers opts finds whose name is exactly name.
func (c *apiClient) serversNamed(cmd *cobra.Command, opts servers.ListOpts, name string) ([]string, error) {
	pages, err := servers.List(c.compute, opts).AllPages(cmd.Context())
	if err != nil {
		return nil, friendly(err)
	}
	all, err := servers.ExtractServers(pages)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range all {
		if s.Name == name {
			ids = append(ids, s.ID)
		}
	}
	return ids, nil
}

// resolveNetwork maps a network name to its id through the Neutron-shaped look-up.
func (c *apiClient) resolveNetwork(cmd *cobra.Command, ref string) (string, error) {
	if len(ref) == 36 && uuid.Validate(ref) == nil {
		return ref, nil
	}
	var body struct {
		Networks []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"networks"`
	}
	if err := c.getJSON(cmd, "/v2.1/networks?name="+url.QueryEscape(ref), &body); err != nil {
		return "", fmt.Errorf("network %q: %w", ref, err)
	}
	switch len(body.Networks) {
	case 0:
		return "", fmt.Errorf("no network with id or name %q", ref)
	case 1:
		return body.Networks[0].ID, nil
	}
	return "", fmt.Errorf("more than one network is named %q; use an id", ref)
}

// imageLabel is "name (id)": the server body names only the id, the
// image API (ingot's Glance-shaped /image/v2) its name. The bare id when
// the image is gone or cannot be read; "-" for a server booted from a volume.
func (c *apiClient) imageLabel(cmd *cobra.Command, id string) string {
	if id == "" {
		return "-"
	}
	var img struct {
		Name string `json:"name"`
	}
	if err := c.getJSON(cmd, "/image/v2/images/"+url.PathEscape(id), &img); err != nil || img.Name == "" {
		return id
	}
	return img.Name + " (" + id + ")"
}
