// Package apitest is a small client of ingot's compute API for end-to-end
// tests: requests, waiting for a status while checking that a server never
// shows a status it must not (I2), and waiting for a delete to finish.
package apitest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/poll"
)

// Client talks to one ingot API. Every method fails the test on transport errors.
type Client struct {
	T   testing.TB
	URL string // API root, e.g. http://127.0.0.1:8774 (no /v2.1)
	// Microversion sent with every request (default 2.90).
	Microversion string
	// Poll is how often the Wait methods look (default 20 ms).
	Poll time.Duration
	// Token, when set, is sent as X-Auth-Token (an API behind Keystone).
	Token string
	// HTTP sends the requests (nil: http.DefaultClient); a history's
	// recording client, for one.
	HTTP *http.Client
}

// New returns a client of the API at url.
func New(t testing.TB, url string) *Client {
	return &Client{T: t, URL: url, Microversion: "2.90", Poll: 20 * time.Millisecond}
}

// Fault is ingot's ingot:fault extension of a server.
type Fault struct {
	Reason string `json:"reason"`
	Node   string `json:"node"`
}

// Attempt is one entry of ingot:attempts.
type Attempt struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

// Server is the part of a server body the tests look at.
type Server struct {
	ID        string                       `json:"id"`
	Status    string                       `json:"status"`
	TaskState *string                      `json:"OS-EXT-STS:task_state"`
	Node      *string                      `json:"OS-EXT-SRV-ATTR:hypervisor_hostname"`
	Addresses map[string][]json.RawMessage `json:"addresses"`
	Fault     *struct {
		Message string `json:"message"`
	} `json:"fault"`
	IngotFault *Fault    `json:"ingot:fault"`
	Attempts   []Attempt `json:"ingot:attempts"`
}

// Deleting reports whether the server shows a delete accepted: task_state
// deleting (Nova keeps the status it had) or DELETED.
func (s Server) Deleting() bool {
	return s.Status == "DELETED" || s.TaskState != nil && *s.TaskState == "deleting"
}

// Call does one request and decodes a JSON answer into out (if not nil).
func (c *Client) Call(method, path string, body, out any) int {
	c.T.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			c.T.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.URL+path, rd)
	if err != nil {
		c.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Nova-API-Version", c.Microversion)
	req.Header.Set("X-Ingot-Extensions", "true") // ingot:fault and ingot:attempts
	if c.Token != "" {
		req.Header.Set("X-Auth-Token", c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		c.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			c.T.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

// Create posts {"server": server} and returns the new id (fails unless 202).
func (c *Client) Create(server map[string]any) string {
	c.T.Helper()
	var out struct {
		Server struct {
			ID string `json:"id"`
		} `json:"server"`
	}
	if code := c.Call("POST", "/v2.1/servers", map[string]any{"server": server}, &out); code != http.StatusAccepted {
		c.T.Fatalf("create %v: HTTP %d", server["name"], code)
	}
	return out.Server.ID
}

// Get returns a server and the HTTP status (404 once deleted).
func (c *Client) Get(id string) (Server, int) {
	c.T.Helper()
	var out struct {
		Server Server `json:"server"`
	}
	code := c.Call("GET", "/v2.1/servers/"+id, nil, &out)
	return out.Server, code
}

// Delete deletes a server (fails unless 204).
func (c *Client) Delete(id string) {
	c.T.Helper()
	if code := c.Call("DELETE", "/v2.1/servers/"+id, nil, nil); code != http.StatusNoContent {
		c.T.Fatalf("delete %s: HTTP %d", id, code)
	}
}

// WaitFor polls until cond holds, failing the test after timeout.
func (c *Client) WaitFor(what string, timeout time.Duration, cond func() bool) {
	c.T.Helper()
	poll.Until(c.T, timeout, what, func() (bool, string) { return cond(), "" })
}

// WaitStatus waits for a status. It fails at once on ERROR when waiting for
// something else, and on ACTIVE unless waiting for ACTIVE or ERROR (an
// ACTIVE server may go to ERROR when its node is lost).
func (c *Client) WaitStatus(id, want string, timeout time.Duration) Server {
	c.T.Helper()
	var s Server
	c.WaitFor(id+" "+want, timeout, func() bool {
		var code int
		s, code = c.Get(id)
		if code != http.StatusOK {
			c.T.Fatalf("GET %s: HTTP %d while waiting for %s", id, code, want)
		}
		if s.Status != want && (s.Status == "ERROR" || (s.Status == "ACTIVE" && want != "ERROR")) {
			c.T.Fatalf("server %s is %s, want %s (fault %+v)", id, s.Status, want, s.IngotFault)
		}
		return s.Status == want
	})
	return s
}

// WaitGone waits for 404, failing if the server shows anything but task_state
// deleting meanwhile (I2: a deleted server never comes back).
func (c *Client) WaitGone(id string, timeout time.Duration) {
	c.T.Helper()
	c.WaitFor(id+" gone", timeout, func() bool {
		s, code := c.Get(id)
		if code == http.StatusNotFound {
			return true
		}
		if !s.Deleting() {
			c.T.Fatalf("deleted server %s shows %s, task_state %v (I2)", id, s.Status, s.TaskState)
		}
		return false
	})
}

// Volume creates a volume through the Cinder-shaped API and returns its id.
func (c *Client) Volume(name string, sizeGB int) string {
	c.T.Helper()
	var out struct {
		Volume struct {
			ID string `json:"id"`
		} `json:"volume"`
	}
	code := c.Call("POST", "/volume/v3/ingot/volumes", map[string]any{"volume": map[string]any{"name": name, "size": sizeGB}}, &out)
	if code != http.StatusAccepted {
		c.T.Fatalf("create volume %s: HTTP %d", name, code)
	}
	return out.Volume.ID
}

// ImportKeypair generates an ed25519 key, imports its public half as keypair
// name through os-keypairs (the caller's user owns it) and returns the
// public key line as the API stores it.
func (c *Client) ImportKeypair(name string) string {
	c.T.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		c.T.Fatal(err)
	}
	wire := sshString([]byte("ssh-ed25519"))
	wire = append(wire, sshString(pub)...)
	line := "ssh-ed25519 " + base64.StdEncoding.EncodeToString(wire) + " " + name + "@test"
	var out struct {
		Keypair struct {
			PublicKey string `json:"public_key"`
		} `json:"keypair"`
	}
	code := c.Call("POST", "/v2.1/os-keypairs", map[string]any{"keypair": map[string]any{"name": name, "public_key": line}}, &out)
	if code != http.StatusOK && code != http.StatusCreated {
		c.T.Fatalf("import keypair %s: HTTP %d", name, code)
	}
	return out.Keypair.PublicKey
}

// sshString is the SSH wire encoding of a string: its length, then its bytes.
func sshString(b []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	return append(out, b...)
}
