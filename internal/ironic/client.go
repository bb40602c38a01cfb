package ironic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
)

// Defaults for Config.
const (
	DefaultMicroversion = "1.78"
	DefaultTimeout      = 30 * time.Second
	// DefaultPageSize is Ironic's [api]max_limit: one list request per 1000 nodes.
	DefaultPageSize = 1000
)

// Config configures a Client. Only URL is required.
type Config struct {
	// URL is Ironic's root, e.g. http://127.0.0.1:6385; a trailing /v1 is accepted.
	URL string
	// Microversion sent with every request; default DefaultMicroversion. Deploy
	// needs >= 1.56 (JSON config drive) and VIFs >= 1.28.
	Microversion string
	// Timeout bounds each HTTP call (not a whole multi-call method); default 30s.
	Timeout time.Duration
	// HTTPClient, if set, is used for every request (copied; its Timeout also applies).
	HTTPClient *http.Client
	// Observer, if set, is called after every HTTP call (so once per page of
	// a list, and up to three times for Deploy) with a stable operation name,
	// the call's error (already classified, nil on success) and its duration.
	// It must be cheap and safe for concurrent use. Operation names: ping,
	// node.list, node.get, node.patch, node.provision, node.power, vif.attach,
	// vif.detach, vif.list, volume_connector.{create,list,delete},
	// volume_target.{create,list,delete}.
	Observer func(op string, err error, d time.Duration)
	// Provider, if set, authenticates every call (an Ironic behind
	// Keystone): its token is sent, and renewed when Ironic answers 401.
	// URL "catalog" then takes Ironic's endpoint from its service catalog,
	// chosen by Endpoint.
	Provider *gophercloud.ProviderClient
	Endpoint gophercloud.EndpointOpts
	// BeforeSend, if set, is asked right before each request that is not a
	// GET or HEAD is written (sendguard.go); its error aborts the request
	// unsent, and the method returns that error (wrapped, without a typed
	// error: nothing reached Ironic).
	BeforeSend func(ctx context.Context) error
	// PageSize is the limit asked for per list request; default DefaultPageSize.
	// Tests set it low to exercise pagination without creating 1000 nodes.
	PageSize int
}

// Client talks to one Ironic. It is immutable after New and safe for
// concurrent use.
//
// Errors: every error a method returns wraps exactly one of the typed errors
// in types.go — except when a call got no answer because the caller's ctx was
// cancelled or passed its deadline: then the error wraps ctx.Err() instead
// (context.Canceled or context.DeadlineExceeded) and no typed error. The caller gave up, so
// reporting "Ironic unavailable" would be a lie that could feed a fault
// reason; the caller knows its own ctx ended. Only the per-call Timeout
// (Config.Timeout) firing while the caller's ctx is still live counts as
// ErrUnavailable. A request Config.BeforeSend refused wraps its error.
type Client struct {
	sc       *gophercloud.ServiceClient
	timeout  time.Duration
	pageSize int
	observe  func(op string, err error, d time.Duration)
}

// New builds a Client. It does not contact Ironic (see Ping).
func New(cfg Config) (*Client, error) {
	if cfg.Provider != nil {
		return newAuthenticated(cfg)
	}
	base := strings.TrimRight(strings.TrimSpace(cfg.URL), "/")
	if base == "" {
		return nil, fmt.Errorf("%w: ironic URL is empty", ErrInvalid)
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("%w: ironic URL %q must start with http:// or https://", ErrInvalid, cfg.URL)
	}
	if !strings.HasSuffix(base, "/v1") {
		base += "/v1"
	}
	sc, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: base + "/"})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if cfg.HTTPClient != nil {
		sc.HTTPClient = *cfg.HTTPClient
	}
	return newClient(cfg, sc), nil
}

// newAuthenticated builds a Client on cfg.Provider's token.
func newAuthenticated(cfg Config) (*Client, error) {
	var sc *gophercloud.ServiceClient
	if strings.TrimSpace(cfg.URL) == "catalog" {
		var err error
		if sc, err = openstack.NewBareMetalV1(cfg.Provider, cfg.Endpoint); err != nil {
			return nil, fmt.Errorf("%w: Ironic's endpoint in the catalog: %v", ErrInvalid, err)
		}
	} else {
		base := strings.TrimSuffix(strings.TrimRight(strings.TrimSpace(cfg.URL), "/"), "/v1")
		if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
			return nil, fmt.Errorf("%w: ironic URL %q must start with http:// or https://", ErrInvalid, cfg.URL)
		}
		sc = &gophercloud.ServiceClient{ProviderClient: cfg.Provider, Endpoint: base + "/v1/", Type: "baremetal"}
	}
	return newClient(cfg, sc), nil
}

func newClient(cfg Config, sc *gophercloud.ServiceClient) *Client {
	sc.Microversion = cfg.Microversion
	if sc.Microversion == "" {
		sc.Microversion = DefaultMicroversion
	}
	if cfg.BeforeSend != nil {
		sc.HTTPClient.Transport = newGuardTransport(sc.HTTPClient.Transport, sc.Endpoint, cfg.BeforeSend)
	}
	c := &Client{sc: sc, timeout: cfg.Timeout, pageSize: cfg.PageSize, observe: cfg.Observer}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.pageSize <= 0 || c.pageSize > DefaultPageSize {
		c.pageSize = DefaultPageSize
	}
	return c
}

// do runs one HTTP call under the per-call timeout, classifies its error
// and reports it to the Observer. action describes the call for messages,
// e.g. "PATCH node <uuid>".
func (c *Client) do(ctx context.Context, op, action string, call func(ctx context.Context) error) error {
	start := time.Now()
	callCtx, cancel := context.WithTimeout(ctx, c.timeout)
	refused := &refusal{}
	err := call(context.WithValue(callCtx, refusalKey{}, refused))
	cancel()
	if rerr := refused.get(); err != nil && rerr != nil {
		err = fmt.Errorf("ironic: %s: not sent: %w", action, rerr)
	} else if err != nil {
		status, _ := httpFault(err)
		classified := classify(action, err)
		if ctxErr := ctx.Err(); ctxErr != nil && status == 0 && errors.Is(classified, ErrUnavailable) {
			// No answer because the caller's ctx ended: say so, not
			// "unavailable" (see Client). An answer Ironic did give wins.
			classified = fmt.Errorf("ironic: %s: %w", action, ctxErr)
		}
		err = classified
	}
	if c.observe != nil {
		c.observe(op, err, time.Since(start))
	}
	return err
}

// Ping checks that Ironic answers (GET /v1), for readiness probes.
func (c *Client) Ping(ctx context.Context) error {
	return c.do(ctx, "ping", "GET /v1", func(ctx context.Context) error {
		var body map[string]any
		_, err := c.sc.Get(ctx, c.sc.Endpoint, &body, &gophercloud.RequestOpts{OkCodes: []int{200}})
		if err == nil && body["id"] != "v1" {
			return errors.New("GET /v1 did not return the v1 version document")
		}
		return err
	})
}
