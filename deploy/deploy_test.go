// Package deploy holds what an operator installs beside the binary: the
// systemd unit, an example production configuration and the Prometheus
// alert rules. These tests check each with the tool that consumes it.
package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/config"
)

// tool finds a command; missing, it skips the test on a developer's
// machine and fails it in CI (CI=true), where .ci/run installs it.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed (.ci/run installs it)", name)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

func run(t *testing.T, dir, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestAlertRules(t *testing.T) {
	promtool := tool(t, "promtool")
	if out, err := run(t, "prometheus", promtool, "check", "rules", "ingot.rules.yml"); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	if out, err := run(t, "prometheus", promtool, "test", "rules", "ingot.rules.test.yml"); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}

// TestAlertRulesTestsHaveTeeth: the unit tests catch a rule that no
// longer fires (a threshold raised so that it never does).
func TestAlertRulesTestsHaveTeeth(t *testing.T) {
	promtool := tool(t, "promtool")
	dir := t.TempDir()
	rules, err := os.ReadFile("prometheus/ingot.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(rules), "(ingot_servers_past_deadline) > 0", "(ingot_servers_past_deadline) > 1000", 1)
	if broken == string(rules) {
		t.Fatal("the past-deadline rule changed: update this test")
	}
	tests, err := os.ReadFile("prometheus/ingot.rules.test.yml")
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"ingot.rules.yml": broken, "ingot.rules.test.yml": string(tests)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := run(t, dir, promtool, "test", "rules", "ingot.rules.test.yml"); err == nil {
		t.Fatalf("promtool passed a rule that never fires:\n%s", out)
	}
}

// TestSystemdUnit: systemd-analyze verifies the unit (any warning about it
// fails, since verify exits 0 on ignored settings) and rates its exposure.
func TestSystemdUnit(t *testing.T) {
	analyze := tool(t, "systemd-analyze")
	unit, err := os.ReadFile("systemd/ingot.service")
	if err != nil {
		t.Fatal(err)
	}
	// verify checks that ExecStart's binary exists: point it at one that does.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(unit), "ExecStart=/usr/local/bin/ingot ", "ExecStart="+self+" ", 1)
	if body == string(unit) {
		t.Fatal("ExecStart no longer runs /usr/local/bin/ingot: update this test")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ingot.service")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, dir, analyze, "verify", path)
	if err != nil {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "ingot.service") {
			t.Errorf("systemd-analyze verify: %s", line)
		}
	}
	out, err = run(t, dir, analyze, "security", "--offline=yes", path)
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	score := exposure(t, out)
	if score > 2.0 {
		t.Errorf("exposure %.1f, want at most 2.0 (systemd's OK band)\n%s", score, out)
	}
	t.Logf("systemd-analyze security: overall exposure %.1f", score)
}

func exposure(t *testing.T, out string) float64 {
	t.Helper()
	const marker = "Overall exposure level for ingot.service: "
	i := strings.Index(out, marker)
	if i < 0 {
		t.Fatalf("no exposure level in:\n%s", out)
	}
	f := strings.Fields(out[i+len(marker):])
	score, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		t.Fatalf("exposure %q: %v", f[0], err)
	}
	return score
}

// TestProductionConfig: the example loads and validates as written, its
// secrets read from the credential files the unit provides.
func TestProductionConfig(t *testing.T) {
	raw, err := os.ReadFile("ingot.production.yaml")
	if err != nil {
		t.Fatal(err)
	}
	creds := t.TempDir()
	for name, v := range map[string]string{"database": "postgres://ingot:pg-pw@db.example:5432/ingot\n", "keystone-password": "ks-pw\n"} {
		if err := os.WriteFile(filepath.Join(creds, name), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	body := strings.ReplaceAll(string(raw), "/run/credentials/ingot.service", creds)
	path := filepath.Join(t.TempDir(), "ingot.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Auth.Strategy != "keystone" || c.Auth.Keystone.Password != "ks-pw" || !config.IsPostgres(c.Database) || c.Ironic.URL != "catalog" {
		t.Errorf("loaded %+v", c.Auth)
	}
	if strings.Contains(string(raw), "pg-pw") || strings.Contains(string(raw), "password:") {
		t.Error("the example carries a secret inline")
	}
}
