package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	tokens3 "github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

// Who the CLI is, in this order: --os-token/OS_TOKEN (a Keystone token,
// with --project for the project it is scoped to); --os-cloud/OS_CLOUD (a
// cloud of clouds.yaml and secure.yaml, searched where the openstack CLI
// searches them); OS_AUTH_URL and the other OS_* variables (password or
// application credential, as the openstack CLI reads them); else noauth
// with --project/INGOT_PROJECT (default "ingot"). OS_AUTH_TYPE=none is
// noauth too.

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

// identity is what identify found out.
type identity struct {
	headers http.Header
	project string      // the project the volume paths name
	compute string      // ingot's endpoint in Keystone's catalog; "" when not known
	tls     *tls.Config // OS_CACERT, OS_INSECURE, cacert/verify of clouds.yaml; nil: Go's defaults
}

// identify resolves the CLI's credentials from its flags and the environment.
func (o *clientOptions) identify(cmd *cobra.Command) (*identity, error) {
	getenv := os.Getenv
	id := &identity{headers: http.Header{}, project: o.project}
	if id.project == "" {
		id.project = getenv("INGOT_PROJECT")
	}
	token := o.token
	if token == "" {
		token = getenv("OS_TOKEN")
	}
	cloud := o.cloud
	if cloud == "" {
		cloud = getenv("OS_CLOUD")
	}
	switch {
	case token != "":
		id.headers.Set("X-Auth-Token", token)
	case cloud != "" || (getenv("OS_AUTH_URL") != "" && !noauthType(getenv("OS_AUTH_TYPE"))):
		if err := id.login(cmd, cloud); err != nil {
			return nil, err
		}
	default:
		if id.project == "" {
			id.project = "ingot"
		}
		id.headers.Set("X-Auth-Project-Id", id.project)
	}
	id.project = strings.TrimSpace(id.project)
	if id.project == "" {
		return nil, fmt.Errorf("--project: name the project the token is scoped to (the volume API's paths carry it)")
	}
	return id, nil
}

func noauthType(t string) bool { return t == "none" || t == "noauth" }

// login gets a token from Keystone: for cloud of clouds.yaml, else for the
// OS_* variables (read through the same loader, so both scope alike).
func (id *identity) login(cmd *cobra.Command, cloud string) error {
	getenv := os.Getenv
	what := "clouds.yaml cloud " + cloud
	opts := []clouds.ParseOption{clouds.WithCloudName(cloud)}
	if cloud == "" {
		what = "OS_AUTH_URL"
		env, err := envCloud()
		if err != nil {
			return err
		}
		opts = []clouds.ParseOption{clouds.WithCloudName("env"), clouds.WithCloudsYAML(bytes.NewReader(env))}
	}
	if p := getenv("OS_PASSWORD"); p != "" {
		opts = append(opts, clouds.WithPassword(p))
	}
	if v := getenv("OS_INSECURE"); v != "" {
		opts = append(opts, clouds.WithInsecure(truthy(v)))
	}
	ao, eo, tlsConf, err := clouds.Parse(opts...)
	if err != nil {
		return fmt.Errorf("keystone (%s): %w", what, err)
	}
	if ao.IdentityEndpoint == "" {
		return fmt.Errorf("keystone (%s): no auth_url", what)
	}
	id.tls = tlsConf
	pc, err := openstack.NewClient(ao.IdentityEndpoint)
	if err != nil {
		return fmt.Errorf("keystone %s: %w", ao.IdentityEndpoint, err)
	}
	pc.HTTPClient = http.Client{Transport: transport(tlsConf)}
	if err := openstack.Authenticate(cmd.Context(), pc, ao); err != nil {
		return fmt.Errorf("keystone %s: %w", ao.IdentityEndpoint, err)
	}
	res, ok := pc.GetAuthResult().(tokens3.CreateResult)
	if !ok {
		return fmt.Errorf("keystone %s: not an identity v3 token", ao.IdentityEndpoint)
	}
	tok, err := res.ExtractTokenID()
	if err != nil {
		return fmt.Errorf("keystone: %w", err)
	}
	id.headers.Set("X-Auth-Token", tok)
	if p, err := res.ExtractProject(); err == nil && p != nil && id.project == "" {
		id.project = p.ID
	}
	// As the openstack CLI: ingot is the catalog's compute service, in
	// OS_REGION_NAME, at OS_INTERFACE (public by default).
	if sc, err := openstack.NewComputeV2(pc, eo); err == nil {
		id.compute = sc.Endpoint
	}
	return nil
}

// envCloud is the OS_* variables as a clouds.yaml holding one cloud, "env".
func envCloud() ([]byte, error) {
	getenv := os.Getenv
	first := func(keys ...string) string {
		for _, k := range keys {
			if v := getenv(k); v != "" {
				return v
			}
		}
		return ""
	}
	c := clouds.Cloud{
		AuthInfo: &clouds.AuthInfo{
			AuthURL:                     getenv("OS_AUTH_URL"),
			Username:                    getenv("OS_USERNAME"),
			UserID:                      getenv("OS_USER_ID"),
			ApplicationCredentialID:     getenv("OS_APPLICATION_CREDENTIAL_ID"),
			ApplicationCredentialName:   getenv("OS_APPLICATION_CREDENTIAL_NAME"),
			ApplicationCredentialSecret: getenv("OS_APPLICATION_CREDENTIAL_SECRET"),
			ProjectName:                 first("OS_PROJECT_NAME", "OS_TENANT_NAME"),
			ProjectID:                   first("OS_PROJECT_ID", "OS_TENANT_ID"),
			UserDomainName:              getenv("OS_USER_DOMAIN_NAME"),
			UserDomainID:                getenv("OS_USER_DOMAIN_ID"),
			ProjectDomainName:           getenv("OS_PROJECT_DOMAIN_NAME"),
			ProjectDomainID:             getenv("OS_PROJECT_DOMAIN_ID"),
			DomainName:                  getenv("OS_DOMAIN_NAME"),
			DomainID:                    getenv("OS_DOMAIN_ID"),
			SystemScope:                 getenv("OS_SYSTEM_SCOPE"),
		},
		RegionName: getenv("OS_REGION_NAME"),
		Interface:  getenv("OS_INTERFACE"),
		CACertFile: getenv("OS_CACERT"),
	}
	out, err := yaml.Marshal(clouds.Clouds{Clouds: map[string]clouds.Cloud{"env": c}})
	if err != nil {
		return nil, fmt.Errorf("keystone: the OS_* variables: %w", err)
	}
	return out, nil
}

func truthy(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// transport is Go's default transport with the TLS settings of the login.
func transport(c *tls.Config) http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if c != nil {
		t.TLSClientConfig = c
	}
	return t
}
