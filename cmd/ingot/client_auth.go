package main

import (
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack"
	tokens3 "github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/spf13/cobra"
)

// Who the CLI is, in this order: --os-token/OS_TOKEN (a Keystone token,
// with --project for the project it is scoped to), OS_AUTH_URL and the
// other OS_* password variables (Keystone, as the openstack CLI reads
// them), else noauth with --project/INGOT_PROJECT (default "ingot").

// authHeaders are set on every request the CLI makes.
type authTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (a *authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range a.headers {
		if r.Header.Get(k) == "" {
			r.Header[k] = v
		}
	}
	return a.base.RoundTrip(r)
}

// identify resolves the CLI's credentials: the headers to send and the
// project the token is scoped to (the volume paths name it).
func (o *clientOptions) identify(cmd *cobra.Command) (http.Header, string, error) {
	h := http.Header{}
	project := o.project
	if project == "" {
		project = os.Getenv("INGOT_PROJECT")
	}
	token := o.token
	if token == "" {
		token = os.Getenv("OS_TOKEN")
	}
	switch {
	case token != "":
		h.Set("X-Auth-Token", token)
	case os.Getenv("OS_AUTH_URL") != "":
		ao, err := openstack.AuthOptionsFromEnv()
		if err != nil {
			return nil, "", fmt.Errorf("keystone: %w", err)
		}
		pc, err := openstack.AuthenticatedClient(cmd.Context(), ao)
		if err != nil {
			return nil, "", fmt.Errorf("keystone %s: %w", ao.IdentityEndpoint, err)
		}
		tok, err := pc.GetAuthResult().(tokens3.CreateResult).ExtractTokenID()
		if err != nil {
			return nil, "", fmt.Errorf("keystone: %w", err)
		}
		h.Set("X-Auth-Token", tok)
		if p, err := pc.GetAuthResult().(tokens3.CreateResult).ExtractProject(); err == nil && p != nil && project == "" {
			project = p.ID
		}
	default:
		if project == "" {
			project = "ingot"
		}
		h.Set("X-Auth-Project-Id", project)
	}
	if project == "" {
		return nil, "", fmt.Errorf("--project: name the project the token is scoped to (the volume API's paths carry it)")
	}
	return h, strings.TrimSpace(project), nil
}
