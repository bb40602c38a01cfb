// Package cloudinittest parses a config drive's network_data.json with
// cloud-init's own code (Debian's cloud-init, run by /usr/bin/python3), the
// way a machine booting from it would: the real consumer of what ingot
// writes, not a model of it.
//
// Without cloud-init (.ci/install-cloud-init.sh installs it) the test is
// skipped, unless INGOT_TEST_IRONIC=1, which makes it a failure (the same
// rule as the real Ironic's, internal/ironictest).
package cloudinittest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

const python = "/usr/bin/python3"

// convertScript reads {"network_data": …, "known_macs": {mac: nic}} on stdin
// and prints {"config": <network config v1>} or {"error": "<Type>: <text>"}.
const convertScript = `
import json, sys
from cloudinit.sources.helpers import openstack
req = json.load(sys.stdin)
try:
    cfg = openstack.convert_net_json(req["network_data"], known_macs=req["known_macs"])
    json.dump({"config": cfg}, sys.stdout)
except Exception as e:
    json.dump({"error": "%s: %s" % (type(e).__name__, e)}, sys.stdout)
`

// Require skips (or, with INGOT_TEST_IRONIC=1, fails) the test when
// cloud-init cannot be imported.
func Require(t testing.TB) {
	t.Helper()
	out, err := exec.Command(python, "-c", "import cloudinit.sources.helpers.openstack, cloudinit.version; print(cloudinit.version.version_string())").CombinedOutput()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("cloud-init not importable by %s (%v: %s); run .ci/install-cloud-init.sh", python, err, strings.TrimSpace(string(out)))
	if ironictest.RealWanted() {
		t.Fatalf("cloudinittest: %s=1 but %s", ironictest.EnvVar, msg)
	}
	t.Skip(msg + ", or set " + ironictest.EnvVar + "=1 to make this a failure")
}

// Config is cloud-init's network config version 1.
type Config struct {
	Version int              `json:"version"`
	Config  []map[string]any `json:"config"`
}

// Convert runs cloud-init's convert_net_json on networkData with nics (MAC
// → interface name) as the machine's NICs. The error is cloud-init's own
// (e.g. "ValueError: Unable to find a system nic for …").
func Convert(t testing.TB, networkData any, nics map[string]string) (*Config, error) {
	t.Helper()
	Require(t)
	in, err := json.Marshal(map[string]any{"network_data": networkData, "known_macs": nics})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", convertScript)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cloudinittest: %s: %v: %s", python, err, stderr.String())
	}
	var res struct {
		Config *Config `json:"config"`
		Error  string  `json:"error"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("cloudinittest: output %q: %v", out, err)
	}
	if res.Error != "" {
		return nil, fmt.Errorf("cloud-init: %s", res.Error)
	}
	return res.Config, nil
}

// Named returns the config entry named name (an interface or bond), or nil.
func (c *Config) Named(name string) map[string]any {
	for _, e := range c.Config {
		if e["name"] == name {
			return e
		}
	}
	return nil
}

// Nameservers lists the addresses of the nameserver entries.
func (c *Config) Nameservers() []string {
	var out []string
	for _, e := range c.Config {
		if e["type"] == "nameserver" {
			if a, ok := e["address"].(string); ok {
				out = append(out, a)
			}
		}
	}
	return out
}

// String is the config as indented JSON (for logs and reports).
func (c *Config) String() string {
	b, _ := json.MarshalIndent(c, "", "  ")
	return string(b)
}
