// Package servicecatalog finds OpenStack services (Neutron, Glance, Cinder)
// in Keystone's catalog and builds the gophercloud clients the adapters
// take: one with ingot's service credentials (renewed on 401), and, from it,
// one that carries a user's token to the same endpoint, as Nova acts for the
// user where it uses the user's token and as itself otherwise.
package servicecatalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
)

// ErrInvalid: the credentials or endpoint options are malformed.
var ErrInvalid = errors.New("servicecatalog: invalid configuration")

// ErrNoEndpoint: the catalog has no endpoint of that type in that region
// and interface.
var ErrNoEndpoint = errors.New("servicecatalog: no endpoint in the catalog")

// ErrAuth: Keystone refused the service credentials or could not be reached.
var ErrAuth = errors.New("servicecatalog: authentication failed")

// Credentials are ingot's service user (password auth, project-scoped).
type Credentials struct {
	// AuthURL is Keystone's v3 root, e.g. http://keystone:5000/v3.
	AuthURL           string
	Username          string
	Password          string
	ProjectName       string
	UserDomainName    string // default "Default"
	ProjectDomainName string // default "Default"
}

// Endpoint chooses among a service's catalog entries.
type Endpoint struct {
	// Region, e.g. RegionOne; empty takes the first.
	Region string
	// Interface: public (default), internal or admin.
	Interface string
}

// Authenticate logs in with the service credentials. The provider renews
// its token when a service answers 401 and is safe for concurrent use.
func Authenticate(ctx context.Context, c Credentials) (*gophercloud.ProviderClient, error) {
	if c.AuthURL == "" || c.Username == "" || c.ProjectName == "" {
		return nil, fmt.Errorf("%w: auth URL, user name and project are required", ErrInvalid)
	}
	ud, pd := c.UserDomainName, c.ProjectDomainName
	if ud == "" {
		ud = "Default"
	}
	if pd == "" {
		pd = "Default"
	}
	opts := gophercloud.AuthOptions{IdentityEndpoint: c.AuthURL, Username: c.Username, Password: c.Password,
		DomainName: ud, AllowReauth: true,
		Scope: &gophercloud.AuthScope{ProjectName: c.ProjectName, DomainName: pd}}
	pc, err := openstack.AuthenticatedClient(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %s as %s: %w", ErrAuth, c.AuthURL, c.Username, err)
	}
	return pc, nil
}

func (e Endpoint) opts() (gophercloud.EndpointOpts, error) {
	iface := gophercloud.AvailabilityPublic
	switch strings.ToLower(e.Interface) {
	case "", "public":
	case "internal":
		iface = gophercloud.AvailabilityInternal
	case "admin":
		iface = gophercloud.AvailabilityAdmin
	default:
		return gophercloud.EndpointOpts{}, fmt.Errorf("%w: interface %q (want public, internal or admin)", ErrInvalid, e.Interface)
	}
	return gophercloud.EndpointOpts{Region: e.Region, Availability: iface}, nil
}

// Network is Neutron's client (type "network", API under v2.0/).
func Network(pc *gophercloud.ProviderClient, e Endpoint) (*gophercloud.ServiceClient, error) {
	return build(pc, e, "network", openstack.NewNetworkV2)
}

// Image is Glance's client (type "image", API under v2/).
func Image(pc *gophercloud.ProviderClient, e Endpoint) (*gophercloud.ServiceClient, error) {
	return build(pc, e, "image", openstack.NewImageV2)
}

// BlockStorage is Cinder's v3 client (type "volumev3").
func BlockStorage(pc *gophercloud.ProviderClient, e Endpoint) (*gophercloud.ServiceClient, error) {
	return build(pc, e, "volumev3", openstack.NewBlockStorageV3)
}

// Compute is Nova's client (type "compute"), for adopting its servers.
func Compute(pc *gophercloud.ProviderClient, e Endpoint) (*gophercloud.ServiceClient, error) {
	return build(pc, e, "compute", openstack.NewComputeV2)
}

type newClient func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)

func build(pc *gophercloud.ProviderClient, e Endpoint, typ string, mk newClient) (*gophercloud.ServiceClient, error) {
	eo, err := e.opts()
	if err != nil {
		return nil, err
	}
	sc, err := mk(pc, eo)
	if err != nil {
		return nil, fmt.Errorf("%w: %s (region %q, interface %s): %w", ErrNoEndpoint, typ, e.Region, eo.Availability, err)
	}
	return sc, nil
}

// URL is the catalog's URL of a service type, for a service without a
// gophercloud client constructor.
func URL(pc *gophercloud.ProviderClient, e Endpoint, serviceType string) (string, error) {
	eo, err := e.opts()
	if err != nil {
		return "", err
	}
	eo.Type = serviceType
	u, err := pc.EndpointLocator(eo)
	if err != nil {
		return "", fmt.Errorf("%w: %s (region %q, interface %s): %w", ErrNoEndpoint, serviceType, e.Region, eo.Availability, err)
	}
	return u, nil
}

// WithToken returns a client for the same endpoint as sc that sends a
// user's token (never renewed: a 401 is the user's to resolve) and shares
// sc's HTTP client.
func WithToken(sc *gophercloud.ServiceClient, token string) *gophercloud.ServiceClient {
	pc := &gophercloud.ProviderClient{
		IdentityBase:     sc.IdentityBase,
		IdentityEndpoint: sc.IdentityEndpoint,
		HTTPClient:       sc.HTTPClient,
		UserAgent:        sc.UserAgent,
	}
	pc.SetToken(token)
	out := *sc
	out.ProviderClient = pc
	return &out
}
