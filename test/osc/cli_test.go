package osc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// osc is Debian's OpenStack CLI. It runs with /usr/bin/python3 (its
// shebang); the environment is rebuilt so that no pyenv, virtualenv,
// PYTHONPATH or OS_* variable of the caller reaches it.
const osc = "/usr/bin/openstack"

// requireCLI skips without the CLI, unless INGOT_TEST_IRONIC=1 (as CI sets
// it), where a missing CLI is a failure: the same rule as the real Ironic's.
func requireCLI(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(osc); err == nil {
		return
	}
	if ironictest.RealWanted() {
		t.Fatalf("%s is missing and %s=1: run .ci/install-osc.sh (Debian python3-openstackclient)", osc, ironictest.EnvVar)
	}
	t.Skipf("%s is missing (install Debian's python3-openstackclient with .ci/install-osc.sh); set %s=1 to make this a failure", osc, ironictest.EnvVar)
}

var progressRE = regexp.MustCompile(`(?m)\r?Progress: \d+|^Complete$`)

// cli runs the OpenStack CLI against one ingot at one microversion.
type cli struct {
	env []string
	mv  string
}

// newCLI is invocation A of docs/clients.md: auth type none
// and the versioned compute endpoint, which the CLI also uses for its Glance
// and Neutron look-ups. cloud, when set, selects an entry of a clouds.yaml
// written into the test's directory instead (see cloudsYAML).
func newCLI(t *testing.T, s *stack, mv, cloud string) *cli {
	home := t.TempDir() // no ~/.config/openstack of the user's
	env := []string{
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + home,
		"LANG=C.UTF-8",
		"PYTHONDONTWRITEBYTECODE=1", // leave /usr/lib/python3 as the package left it
		"PYTHONUNBUFFERED=1",
		"OS_COMPUTE_API_VERSION=" + mv,
	}
	if cloud == "" {
		env = append(env, "OS_AUTH_TYPE=none", "OS_ENDPOINT="+s.url+"/v2.1")
	} else {
		path := filepath.Join(home, "clouds.yaml")
		if err := os.WriteFile(path, []byte(cloudsYAML(s.url)), 0o600); err != nil {
			t.Fatalf("clouds.yaml: %v", err)
		}
		env = append(env, "OS_CLIENT_CONFIG_FILE="+path, "OS_CLOUD="+cloud)
	}
	return &cli{env: env, mv: mv}
}

// cloudsYAML is the clouds.yaml of docs/clients.md: "bm-split" sends the
// image and network look-ups to ingot's Glance- and Neutron-shaped roots.
func cloudsYAML(url string) string {
	return fmt.Sprintf(`clouds:
  bm:
    auth_type: none
    auth: {endpoint: %[1]s/v2.1}
  bm-split:
    auth_type: none
    auth: {endpoint: %[1]s/v2.1}
    image_endpoint_override: %[1]s/image/
    network_endpoint_override: %[1]s/network/
  bm-volume:
    auth_type: none
    auth: {endpoint: %[1]s/v2.1}
    block_storage_endpoint_override: %[1]s/volume/v3/ingot/
`, url)
}

// run is one CLI invocation, as a user types it.
func (c *cli) run(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	return c.exec(ctx, nil, append([]string{"--os-compute-api-version", c.mv}, args...))
}

// session feeds commands to one interactive CLI session (`openstack`
// reading commands from stdin, as cliff's shell does) and returns the JSON
// document each command printed, in order. One Python start-up for a dozen
// commands keeps the suite fast; every command must print JSON (-f json)
// except the last ones, which may print nothing (deletes).
func (c *cli) session(ctx context.Context, wantJSON int, commands ...string) ([]json.RawMessage, string, error) {
	stdin := strings.Join(commands, "\n") + "\n"
	stdout, stderr, err := c.exec(ctx, strings.NewReader(stdin), nil)
	if err != nil {
		return nil, stderr, err
	}
	var docs []json.RawMessage
	// `--wait` prints "\rProgress: N" between the documents while it polls.
	dec := json.NewDecoder(strings.NewReader(progressRE.ReplaceAllString(stdout, "")))
	for {
		var doc json.RawMessage
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return docs, stderr, fmt.Errorf("output after %d documents is not JSON: %w\nstdout:\n%s", len(docs), err, stdout)
		}
		docs = append(docs, doc)
	}
	if len(docs) != wantJSON {
		return docs, stderr, fmt.Errorf("%d JSON documents for %d commands that print one: a command failed\nstdout:\n%s", len(docs), wantJSON, stdout)
	}
	return docs, stderr, nil
}

func (c *cli) exec(ctx context.Context, stdin io.Reader, args []string) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, osc, args...)
	cmd.Env = c.env
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("openstack %s: %w\nstderr:\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String(), err
}
