package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/ingot-dev/ingot/internal/safetext"
	"github.com/spf13/cobra"
)

// clientMicroversion is what the CLI asks for: high enough for embedded
// flavors (2.47), event hosts (2.62) and details (2.84).
const clientMicroversion = "2.90"

// extensionsHeader asks the API for ingot's extension members (phase,
// attempts, the fault's reason and node; a volume's status reason), which
// a plain Nova client never sees.
const extensionsHeader = "X-Ingot-Extensions"

// clientOptions are the flags every API client command shares.
type clientOptions struct {
	endpoint string
	output   string        // "" (human) or "json"
	poll     time.Duration // --wait polling interval (0: one second)
	token    string        // --os-token (client_auth.go)
	cloud    string        // --os-cloud
	project  string        // --project
}

// addClientCommands adds the API client commands (server …, node …, volume …, keypair …).
func addClientCommands(root *cobra.Command) {
	opts := &clientOptions{}
	for _, group := range []*cobra.Command{newServerCmd(opts), newNodeCmd(opts), newVolumeCmd(opts), newKeypairCmd(opts), newFlavorCmd(opts)} {
		group.PersistentFlags().StringVar(&opts.endpoint, "endpoint", "",
			`ingot API root (env INGOT_ENDPOINT; default: the catalog's compute endpoint after a Keystone login, else "`+defaultEndpoint+`")`)
		group.PersistentFlags().DurationVar(&opts.poll, "poll-interval", time.Second,
			"how often --wait polls the server")
		group.PersistentFlags().StringVar(&opts.token, "os-token", "", "a Keystone token (env OS_TOKEN; OS_CLOUD, or OS_AUTH_URL and the OS_* password variables, also work)")
		group.PersistentFlags().StringVar(&opts.cloud, "os-cloud", "", "a cloud of clouds.yaml to log in to Keystone with (env OS_CLOUD)")
		group.PersistentFlags().StringVar(&opts.project, "project", "", `project id: noauth's X-Auth-Project-Id (env INGOT_PROJECT, default "ingot"), or a token's project`)
		root.AddCommand(group)
	}
}

// defaultEndpoint is where the CLI finds ingot when nothing says.
const defaultEndpoint = "http://127.0.0.1:8774"

// addOutputFlag adds -o/--output to a command that can print JSON for scripts.
func addOutputFlag(cmd *cobra.Command, opts *clientOptions) {
	cmd.Flags().StringVarP(&opts.output, "output", "o", "", `output format: "" (table) or "json"`)
}

// apiClient talks to one ingot endpoint: gophercloud's compute client for
// the Nova-shaped calls, plain HTTP for ingot's own extension.
type apiClient struct {
	root      string // scheme://host[:port], no trailing slash
	project   string // the caller's project (volume paths)
	compute   *gophercloud.ServiceClient
	http      *http.Client
	out       io.Writer
	errOut    io.Writer
	pollEvery time.Duration
}

func (o *clientOptions) client(cmd *cobra.Command) (*apiClient, error) {
	if o.output != "" && o.output != "json" {
		return nil, fmt.Errorf("--output %q: want json or nothing", o.output)
	}
	id, err := o.identify(cmd)
	if err != nil {
		return nil, err
	}
	endpoint := o.endpoint
	for _, e := range []string{os.Getenv("INGOT_ENDPOINT"), id.compute, defaultEndpoint} {
		if endpoint == "" {
			endpoint = e
		}
	}
	root := strings.TrimRight(endpoint, "/")
	// Accept the endpoint the OpenStack CLI uses (…/v2.1) as well.
	root = strings.TrimSuffix(root, "/v2.1")
	if !strings.HasPrefix(root, "http://") && !strings.HasPrefix(root, "https://") {
		return nil, fmt.Errorf("--endpoint %q: want an http:// or https:// URL", endpoint)
	}
	headers, project := id.headers, id.project
	headers.Set(extensionsHeader, "true") // on every request, gophercloud's too
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &authTransport{base: transport(id.tls), headers: headers}}
	poll := o.poll
	if poll <= 0 {
		poll = time.Second
	}
	return &apiClient{
		root:    root,
		project: project,
		compute: &gophercloud.ServiceClient{
			ProviderClient: &gophercloud.ProviderClient{HTTPClient: *hc},
			Endpoint:       root + "/v2.1/", // the trailing slash matters to gophercloud
			Type:           "compute",
			Microversion:   clientMicroversion,
		},
		http:      hc,
		out:       cmd.OutOrStdout(),
		errOut:    cmd.ErrOrStderr(),
		pollEvery: poll,
	}, nil
}

// getJSON GETs path (relative to the root) into v.
func (c *apiClient) getJSON(cmd *cobra.Command, path string, v any) error {
	req, err := http.NewRequestWithContext(cmd.Context(), http.MethodGet, c.root+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-OpenStack-Nova-API-Version", clientMicroversion)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &httpError{status: resp.StatusCode, message: errorMessage(body)}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: bad answer: %w", path, err)
	}
	return nil
}

// httpError is a non-2xx answer, with the message of its Nova-shaped body.
type httpError struct {
	status  int
	message string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.status, http.StatusText(e.status), safetext.Escape(e.message))
}

// errorMessage takes the message out of {"<key>": {"message": …}} or
// {"message": …}; otherwise the body itself.
func errorMessage(body []byte) string {
	var wrapped map[string]json.RawMessage
	if json.Unmarshal(body, &wrapped) == nil {
		var flat struct{ Message string }
		if json.Unmarshal(body, &flat) == nil && flat.Message != "" {
			return flat.Message
		}
		for _, inner := range wrapped {
			var m struct{ Message string }
			if json.Unmarshal(inner, &m) == nil && m.Message != "" {
				return m.Message
			}
		}
	}
	return strings.TrimSpace(string(body))
}

// statusOf reports the HTTP status of a failed call (0 when it never got one).
func statusOf(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.status
	}
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &ue) {
		return ue.Actual
	}
	return 0
}

// friendly turns gophercloud's error into the API's own message.
func friendly(err error) error {
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &ue) {
		return &httpError{status: ue.Actual, message: errorMessage(ue.Body)}
	}
	return err
}

func (c *apiClient) printJSON(v any) error {
	enc := json.NewEncoder(c.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table lays out rows in aligned columns. Every cell is untrusted text
// (a name, a tag, a fault message…) and is escaped: a tab or newline in a
// name cannot make a column or row, an ESC cannot reach the terminal, a
// U+202E cannot reverse the row.
type table struct{ tw *tabwriter.Writer }

func (c *apiClient) table() *table {
	return &table{tw: tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)}
}

// row writes one line of cells.
func (t *table) row(cells ...string) {
	for i, cell := range cells {
		if i > 0 {
			_, _ = io.WriteString(t.tw, "\t")
		}
		_, _ = io.WriteString(t.tw, safetext.Escape(cell))
	}
	_, _ = io.WriteString(t.tw, "\n")
}

// kv writes a "key value" line of a show.
func (t *table) kv(k, v string) { t.row(k, v) }

// blank writes an empty line.
func (t *table) blank() { _, _ = io.WriteString(t.tw, "\n") }

func (t *table) flush() error { return t.tw.Flush() }

// retryable reports whether a poll may succeed later: the service did not
// answer (restarting, network) or answered 5xx.
func retryable(err error) bool {
	if st := statusOf(err); st != 0 {
		return st >= 500
	}
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne)
}
