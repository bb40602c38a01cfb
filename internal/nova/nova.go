// Package nova reads what adoption needs of Nova's compute API — servers
// on Ironic hypervisors, flavors with their extra specs, key pairs, server
// groups and the compute services — with an admin's credentials, through
// gophercloud. It never writes. Nova's answers are classified here.
package nova

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/instanceactions"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/services"
)

// Microversion is the compute API version the reads use: servers show
// their flavor inline with its extra specs (2.47), tags (2.26) and a
// group's policy and rules (2.64).
const Microversion = "2.90"

var (
	// ErrNotFound: Nova has no such thing (a key pair deleted since).
	ErrNotFound = errors.New("nova: not found")
	// ErrForbidden: the credentials are not an admin's.
	ErrForbidden = errors.New("nova: forbidden (admin credentials needed)")
	// ErrUnavailable: Nova could not be reached or answered 5xx.
	ErrUnavailable = errors.New("nova: unavailable")
)

// Server is one of Nova's servers as adoption reads it.
type Server struct {
	ID, Name, ProjectID, UserID string
	Status, TaskState           string
	// Node is the Ironic node (the hypervisor_hostname of Nova's Ironic
	// driver) and Host the nova-compute service's host.
	Node, Host       string
	AvailabilityZone string
	KeyName          string
	// ImageID is "" for a server booted from a volume.
	ImageID    string
	FlavorName string
	Metadata   map[string]string
	Tags       []string
	Volumes    []Volume
	Created    time.Time
	LaunchedAt time.Time
}

// Volume is a volume Nova shows attached to a server.
type Volume struct {
	ID                  string
	DeleteOnTermination bool
}

// Flavor is one of Nova's flavors.
type Flavor struct {
	ID, Name, Description string
	RAMMB, VCPUs, DiskGB  int
	Public                bool
	ExtraSpecs            map[string]string
}

// Service is a nova-compute service.
type Service struct {
	Host, Status, State string
}

// Keypair is a user's key pair.
type Keypair struct {
	Name, Type, PublicKey, Fingerprint, UserID string
}

// Group is a server group.
type Group struct {
	ID, Name, Policy, ProjectID, UserID string
	MaxPerHost                          int
	Members                             []string
}

// Client reads Nova.
type Client struct {
	sc      *gophercloud.ServiceClient
	timeout time.Duration
}

// New returns a client over sc (the catalog's compute endpoint, an admin's
// token); each call is bounded by timeout (0: 60 s).
func New(sc *gophercloud.ServiceClient, timeout time.Duration) *Client {
	c := *sc
	c.Microversion = Microversion
	if timeout <= 0 {
		timeout = time.Minute
	}
	return &Client{sc: &c, timeout: timeout}
}

// Servers lists every project's servers.
func (c *Client) Servers(ctx context.Context) ([]Server, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	pages, err := servers.List(c.sc, servers.ListOpts{AllTenants: true}).AllPages(ctx)
	if err != nil {
		return nil, classify("list servers", err)
	}
	all, err := servers.ExtractServers(pages)
	if err != nil {
		return nil, fmt.Errorf("nova: servers: %w", err)
	}
	// gophercloud keeps only the ids of the attached volumes.
	var vols []struct {
		Volumes []struct {
			ID                  string `json:"id"`
			DeleteOnTermination bool   `json:"delete_on_termination"`
		} `json:"os-extended-volumes:volumes_attached"`
	}
	if err := servers.ExtractServersInto(pages, &vols); err != nil || len(vols) != len(all) {
		return nil, fmt.Errorf("nova: servers' volumes: %w (%d of %d)", err, len(vols), len(all))
	}
	out := make([]Server, 0, len(all))
	for i, s := range all {
		v := Server{ID: s.ID, Name: s.Name, ProjectID: s.TenantID, UserID: s.UserID, Status: s.Status,
			TaskState: s.TaskState, Node: s.HypervisorHostname, Host: s.Host, AvailabilityZone: s.AvailabilityZone,
			KeyName: s.KeyName, Metadata: s.Metadata, Created: s.Created, LaunchedAt: s.LaunchedAt}
		v.ImageID, _ = s.Image["id"].(string)
		v.FlavorName, _ = s.Flavor["original_name"].(string)
		if s.Tags != nil {
			v.Tags = slices.Clone(*s.Tags)
		}
		for _, a := range vols[i].Volumes {
			v.Volumes = append(v.Volumes, Volume{ID: a.ID, DeleteOnTermination: a.DeleteOnTermination})
		}
		out = append(out, v)
	}
	return out, nil
}

// FirstInterfaceAttach is when the first attach_interface action on the
// server started (zero: never): the ports made after it may be ports a
// user gave, which Nova's API does not tell apart from those it made.
func (c *Client) FirstInterfaceAttach(ctx context.Context, serverID string) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	pages, err := instanceactions.List(c.sc, serverID, nil).AllPages(ctx)
	if err != nil {
		return time.Time{}, classify("actions of server "+serverID, err)
	}
	all, err := instanceactions.ExtractInstanceActions(pages)
	if err != nil {
		return time.Time{}, fmt.Errorf("nova: actions of server %s: %w", serverID, err)
	}
	var first time.Time
	for _, a := range all {
		if a.Action == "attach_interface" && (first.IsZero() || a.StartTime.Before(first)) {
			first = a.StartTime
		}
	}
	return first, nil
}

// Flavors lists every flavor, public and private, with its extra specs.
func (c *Client) Flavors(ctx context.Context) ([]Flavor, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	pages, err := flavors.ListDetail(c.sc, flavors.ListOpts{AccessType: flavors.AllAccess}).AllPages(ctx)
	if err != nil {
		return nil, classify("list flavors", err)
	}
	all, err := flavors.ExtractFlavors(pages)
	if err != nil {
		return nil, fmt.Errorf("nova: flavors: %w", err)
	}
	out := make([]Flavor, 0, len(all))
	for _, f := range all {
		out = append(out, Flavor{ID: f.ID, Name: f.Name, Description: f.Description, RAMMB: f.RAM, VCPUs: f.VCPUs,
			DiskGB: f.Disk, Public: f.IsPublic, ExtraSpecs: f.ExtraSpecs})
	}
	return out, nil
}

// ComputeServices lists the nova-compute services.
func (c *Client) ComputeServices(ctx context.Context) ([]Service, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	pages, err := services.List(c.sc, services.ListOpts{Binary: "nova-compute"}).AllPages(ctx)
	if err != nil {
		return nil, classify("list compute services", err)
	}
	all, err := services.ExtractServices(pages)
	if err != nil {
		return nil, fmt.Errorf("nova: services: %w", err)
	}
	out := make([]Service, 0, len(all))
	for _, s := range all {
		out = append(out, Service{Host: s.Host, Status: s.Status, State: s.State})
	}
	return out, nil
}

// Keypair is the user's key pair of that name.
func (c *Client) Keypair(ctx context.Context, userID, name string) (Keypair, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	kp, err := keypairs.Get(ctx, c.sc, name, keypairs.GetOpts{UserID: userID}).Extract()
	if err != nil {
		return Keypair{}, classify("key pair "+name, err)
	}
	return Keypair{Name: kp.Name, Type: kp.Type, PublicKey: kp.PublicKey, Fingerprint: kp.Fingerprint, UserID: kp.UserID}, nil
}

// Groups lists every project's server groups with their members.
func (c *Client) Groups(ctx context.Context) ([]Group, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	pages, err := servergroups.List(c.sc, servergroups.ListOpts{AllProjects: true}).AllPages(ctx)
	if err != nil {
		return nil, classify("list server groups", err)
	}
	all, err := servergroups.ExtractServerGroups(pages)
	if err != nil {
		return nil, fmt.Errorf("nova: server groups: %w", err)
	}
	out := make([]Group, 0, len(all))
	for _, g := range all {
		v := Group{ID: g.ID, Name: g.Name, ProjectID: g.ProjectID, UserID: g.UserID, Members: g.Members}
		if g.Policy != nil {
			v.Policy = *g.Policy
		} else if len(g.Policies) > 0 {
			v.Policy = g.Policies[0]
		}
		if g.Rules != nil {
			v.MaxPerHost = g.Rules.MaxServerPerHost
		}
		out = append(out, v)
	}
	return out, nil
}

// classify turns gophercloud's errors into this package's.
func classify(what string, err error) error {
	switch {
	case gophercloud.ResponseCodeIs(err, http.StatusNotFound):
		return fmt.Errorf("%w: %s: %w", ErrNotFound, what, err)
	case gophercloud.ResponseCodeIs(err, http.StatusForbidden), gophercloud.ResponseCodeIs(err, http.StatusUnauthorized):
		return fmt.Errorf("%w: %s: %w", ErrForbidden, what, err)
	}
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &ue) && ue.Actual < 500 {
		return fmt.Errorf("nova: %s: %w", what, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, what, err)
}
