// Package neutron is ingot's adapter to OpenStack Neutron: the calls Nova's
// Ironic-driver flow makes on ports (create for a server, find again after a
// crash, bind as each Ironic network interface needs, unbind, release,
// delete), and the reads network_data.json and the Nova-shaped proxies need
// (networks, subnets, security groups). Every error is classified here
// (errors.go); nothing above sees gophercloud or HTTP.
package neutron

import (
	"context"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// DefaultTimeout bounds each HTTP call. A first call with a new token takes
// 1–2 s (keystonemiddleware validates it); a binding about 2 s.
const DefaultTimeout = 30 * time.Second

// Client talks to one Neutron with one token source: the ServiceClient's
// provider (ingot's service user, renewed on 401) or a user's token
// (servicecatalog.WithToken). It is safe for concurrent use.
type Client struct {
	sc      *gophercloud.ServiceClient
	timeout time.Duration
}

// New wraps a network ServiceClient (servicecatalog.Network). timeout <= 0
// means DefaultTimeout.
func New(sc *gophercloud.ServiceClient, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{sc: sc, timeout: timeout}
}

// call runs one request under the per-call timeout and classifies its error.
func (c *Client) call(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	callCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return classify(ctx, op, fn(callCtx))
}

func (c *Client) get(ctx context.Context, op, url string, out any) error {
	return c.call(ctx, op, func(ctx context.Context) error {
		_, err := c.sc.Get(ctx, url, out, &gophercloud.RequestOpts{OkCodes: []int{200}})
		return err
	})
}

func (c *Client) post(ctx context.Context, op, url string, body, out any) error {
	return c.call(ctx, op, func(ctx context.Context) error {
		_, err := c.sc.Post(ctx, url, body, out, &gophercloud.RequestOpts{OkCodes: []int{201}})
		return err
	})
}

func (c *Client) put(ctx context.Context, op, url string, body, out any) error {
	return c.call(ctx, op, func(ctx context.Context) error {
		_, err := c.sc.Put(ctx, url, body, out, &gophercloud.RequestOpts{OkCodes: []int{200}})
		return err
	})
}

func (c *Client) delete(ctx context.Context, op, url string) error {
	return c.call(ctx, op, func(ctx context.Context) error {
		_, err := c.sc.Delete(ctx, url, &gophercloud.RequestOpts{OkCodes: []int{204}})
		return err
	})
}
