// Package cinder is ingot's client of OpenStack Cinder (block storage), a
// thin layer over gophercloud's blockstorage/v3 that does what Nova does for
// bare metal at microversion 3.44: volumes (get, list, create, delete),
// snapshots (for Nova's os-snapshots proxy) and
// the attachments API (create, update with the node's connector, complete,
// delete, list by server). Every error is classified here, once, into the
// sentinels of errors.go.
//
// Tokens: each call carries the user's token (X-Auth-Token) and, when the
// Client has one, ingot's own in X-Service-Token, as Nova sends it: Cinder
// then treats the call as the compute service's (an attachment delete does
// not ask the compute endpoint whether the server still uses it), and
// Keystone accepts a user token that expired during a long operation.
package cinder

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
)

// Microversion is the block-storage API version of every call (3.44:
// attachments with os-complete, as Nova).
const Microversion = "3.44"

// TokenSource gives a token for one call (a cache refreshing it is the
// caller's).
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// StaticToken is a token known already (a user's, from their request).
type StaticToken string

// Token returns the token.
func (s StaticToken) Token(context.Context) (string, error) { return string(s), nil }

// ProviderToken is the current token of an authenticated gophercloud
// provider (ingot's own, e.g. internal/auth's Keystone.Provider()). A
// token that expired comes back as ErrUnauthorized; the provider's
// Reauthenticate renews it.
func ProviderToken(pc *gophercloud.ProviderClient) TokenSource { return providerToken{pc} }

type providerToken struct{ pc *gophercloud.ProviderClient }

func (p providerToken) Token(context.Context) (string, error) {
	if tok := p.pc.Token(); tok != "" {
		return tok, nil
	}
	return "", errors.New("cinder: the provider has no token")
}

// Config says where Cinder is and how calls authenticate.
type Config struct {
	// Endpoint is the block-storage API root, e.g. http://host:8776/v3
	// (Cinder ≥ 21 takes it without a project id). Empty: looked up in
	// Identity's catalog with the service token (see New).
	Endpoint string
	// Identity is Keystone's v3 root, for the catalog lookup.
	Identity string
	// Region and Interface select the catalog's endpoint (default public).
	Region, Interface string
	// User is the X-Auth-Token of the calls (WithUser changes it).
	User TokenSource
	// Service, when set, is sent as X-Service-Token (a token of a user with
	// the role service: ingot's own).
	Service TokenSource
	// HTTPClient (default http.DefaultClient).
	HTTPClient *http.Client
	// AllProjects lists attachments of every project (all_tenants: an
	// admin's calls, as ingot's own are for its users' volumes).
	AllProjects bool
}

// Client calls Cinder with one user's token. It is cheap to copy.
type Client struct {
	endpoint string
	user     TokenSource
	service  TokenSource
	hc       *http.Client
	all      bool
}

// New makes a Client; with no Endpoint it reads the catalog once
// (block-storage, else volumev3).
func New(ctx context.Context, cfg Config) (*Client, error) {
	c := &Client{endpoint: cfg.Endpoint, user: cfg.User, service: cfg.Service, hc: cfg.HTTPClient, all: cfg.AllProjects}
	if c.hc == nil {
		c.hc = http.DefaultClient
	}
	if c.endpoint == "" {
		src := cfg.Service
		if src == nil {
			src = cfg.User
		}
		if src == nil || cfg.Identity == "" {
			return nil, errors.New("cinder: no endpoint, and no identity service and token to look one up")
		}
		tok, err := src.Token(ctx)
		if err != nil {
			return nil, err
		}
		if c.endpoint, err = lookup(ctx, c.hc, cfg.Identity, tok, cfg.Region, cfg.Interface); err != nil {
			return nil, err
		}
	}
	c.endpoint = strings.TrimRight(c.endpoint, "/") + "/"
	return c, nil
}

// WithUser is c calling with another user's token.
func (c *Client) WithUser(user TokenSource) *Client {
	d := *c
	d.user = user
	return &d
}

// Endpoint is the API root the Client calls.
func (c *Client) Endpoint() string { return c.endpoint }

// sc builds gophercloud's client for one call, with this call's tokens.
func (c *Client) sc(ctx context.Context, op string) (*gophercloud.ServiceClient, error) {
	if c.user == nil {
		return nil, &Error{Op: op, Message: "no user token", kind: ErrUnauthorized}
	}
	tok, err := c.user.Token(ctx)
	if err != nil {
		return nil, &Error{Op: op, Message: "user token: " + err.Error(), kind: ErrUnauthorized, cause: err}
	}
	pc := &gophercloud.ProviderClient{HTTPClient: *c.hc, UserAgent: gophercloud.UserAgent{}}
	pc.UserAgent.Prepend("ingot")
	pc.SetToken(tok)
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: c.endpoint, Type: "block-storage", Microversion: Microversion}
	if c.service != nil {
		st, err := c.service.Token(ctx)
		if err != nil {
			return nil, &Error{Op: op, Message: "service token: " + err.Error(), kind: ErrUnauthorized, cause: err}
		}
		sc.MoreHeaders = map[string]string{"X-Service-Token": st}
	}
	return sc, nil
}
