package tempest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
)

// EnvVar turns the suite on; without it TestTempest is skipped (it takes
// minutes, so the ordinary `go test ./...` does not run it).
const EnvVar = "INGOT_TEMPEST"

// Selection is the compute API tests this suite runs.
const Selection = `^tempest\.api\.compute\.(servers|admin|flavors|keypairs|limits|test_quotas|test_versions|test_extensions)`

const (
	tempestBin = "/usr/bin/tempest"
	stestrBin  = "/usr/bin/stestr"
	python     = "/usr/bin/python3"
	// concurrency: two workers on the 2-core machines.
	concurrency = 2
	// runTimeout: the cloud run's volume tests wait up to build_timeout
	// (120 s) for a volume's status, several times in a failing test.
	runTimeout = 25 * time.Minute
)

// The catalogue ingot serves to Tempest (ingot.yaml below).
const (
	imageRef    = "6b0d2e0c-1f43-4c3a-9b5e-0a0d5c2f4a11"
	imageRefAlt = "9d3f7a52-5e21-4b8e-8a76-3c1e2b9f0d22"
	flavorRef   = "1"
	flavorAlt   = "2"
	network     = "private"
)

func wanted() bool {
	v := os.Getenv(EnvVar)
	return v == "1" || v == "true" || v == "yes"
}

func TestMain(m *testing.M) { os.Exit(ingottest.Main(m)) }

// ingotConfig: the built-in simulator with fast deploys and more nodes than
// two Tempest workers hold at once, two flavors and two images (Tempest's
// _ref and _ref_alt), one network, Keystone auth.
const ingotConfig = `# Written by test/tempest.
database: {{.Dir}}/ingot.db
poll_interval: 200ms
log_level: info
ironic:
  url: sim
  sim: {nodes: 40, resource_class: baremetal, deploy_time: 1s, undeploy_time: 500ms}
flavors:
  - {id: "` + flavorRef + `", name: bm.small, resource_class: baremetal, vcpus: 2, ram_mb: 2048, disk_gb: 10}
  - {id: "` + flavorAlt + `", name: bm.medium, resource_class: baremetal, vcpus: 4, ram_mb: 4096, disk_gb: 20}
images:
  - {id: ` + imageRef + `, name: debian-12, url: "http://images.example/debian-12.qcow2"}
  - {id: ` + imageRefAlt + `, name: ubuntu-24.04, url: "http://images.example/ubuntu-24.04.qcow2"}
networks:
  - {name: ` + network + `, cidr: 10.20.0.0/22}
api:
  enable_instance_password: true
auth:
  strategy: keystone
  keystone:
    auth_url: {{.Keystone}}
    username: ingot
    password: {{.Password}}
    project_name: service
`

// accounts: Tempest's pre-provisioned credentials, each member in a project
// of its own (Tempest's "alt" user must be another project).
const (
	members = 8
	admins  = 3
)

// TestTempest runs the selection and fails on unexpected failures.
func TestTempest(t *testing.T) {
	if !wanted() {
		t.Skipf("set %s=1 to run Tempest's compute API tests (minutes)", EnvVar)
	}
	runTempest(t, false)
}

// CloudEnvVar turns on TestTempestCloud: the same suite with ingot's
// network and image backends a real neutron-server and glance-api (the
// security group and image tests run too).
const CloudEnvVar = "INGOT_TEMPEST_CLOUD"

// CloudSelection adds the tests that need a cloud's Neutron, Glance and
// Cinder.
const CloudSelection = `^tempest\.api\.compute\.(servers|admin|flavors|keypairs|limits|test_quotas|test_versions|test_extensions|security_groups|images|volumes)`

// cloudConfig is sdkConfig with the volumes in the cloud's Cinder (found in
// the catalog).
var cloudConfig = sdkConfig + "volume:\n  backend: cinder\n"

// TestTempestCloud runs Tempest against ingot in front of Neutron, Glance
// and Cinder.
func TestTempestCloud(t *testing.T) {
	if v := os.Getenv(CloudEnvVar); v != "1" && v != "true" && v != "yes" {
		t.Skipf("set %s=1 to run Tempest's compute API tests with Neutron and Glance (minutes)", CloudEnvVar)
	}
	runTempest(t, true)
}

// runTempest runs Tempest against ingot behind Keystone; with cloud, ingot's
// networks, images and volumes are a real Neutron's, Glance's and Cinder's.
func runTempest(t *testing.T, cloud bool) {
	for _, p := range []string{tempestBin, stestrBin, python} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=1 but %s is missing (run .ci/install-tempest.sh)", EnvVar, p)
		}
	}
	list := "expected-failures.txt"
	if cloud {
		list = "cloud-expected-failures.txt"
	}
	expected, err := readExpected(list)
	if err != nil {
		t.Fatal(err)
	}
	dir := keptDir(t)
	begin := time.Now()

	ks := keystonetest.Start(t)
	var accounts strings.Builder
	for i := 1; i <= members; i++ {
		u := ks.AddUser(t, fmt.Sprintf("tempest-member-%d", i), fmt.Sprintf("tempest-%d", i), "member")
		fmt.Fprintf(&accounts, "- username: %s\n  project_name: %s\n  password: %s\n  domain_name: Default\n  roles: [member]\n",
			u.Name, u.ProjectName, keystonetest.Password)
	}
	for i := 1; i <= admins; i++ {
		u := ks.AddUser(t, fmt.Sprintf("tempest-admin-%d", i), fmt.Sprintf("tempest-admin-%d", i), "admin")
		fmt.Fprintf(&accounts, "- username: %s\n  project_name: %s\n  password: %s\n  domain_name: Default\n  types: [admin]\n  roles: [admin]\n",
			u.Name, u.ProjectName, keystonetest.Password)
	}
	vars := map[string]any{"Dir": dir, "Keystone": ks.URL, "Password": keystonetest.Password,
		"Image": imageRef, "ImageAlt": imageRefAlt, "Flavor": flavorRef, "FlavorAlt": flavorAlt,
		"Network": network, "BuildTimeout": 120, "Cloud": cloud}
	regex := Selection
	if cloud {
		vars["Image"], vars["ImageAlt"] = startCloud(t, ks, true)
		cfg := filepath.Join(dir, "ingot.yaml")
		writeTemplate(t, cfg, cloudConfig, vars)
		ingot := ingottest.Serve(t, ingottest.Binary(t), cfg, ingottest.Options{Log: filepath.Join(dir, "ingot.log")}).API
		ks.RegisterService(t, "compute", "nova", ingot+"/v2.1")
		regex = CloudSelection
	} else {
		serveBehind(t, ks, dir, vars)
	}
	setup := time.Since(begin)

	// A clean environment for Debian's Python; HOME holds Tempest's
	// workspace registry.
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"}
	ws := filepath.Join(dir, "workspace")
	mustRun(t, dir, env, 2*time.Minute, tempestBin, "init", "--name", "ingot", ws)
	tmpl, err := os.ReadFile("tempest.conf.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	vars["Dir"] = ws
	writeTemplate(t, filepath.Join(ws, "etc", "tempest.conf"), string(tmpl), vars)
	if err := os.WriteFile(filepath.Join(ws, "etc", "accounts.yaml"), []byte(accounts.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "lock"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := os.Getenv("INGOT_TEMPEST_REGEX"); r != "" {
		regex = r
	}
	runStart := time.Now()
	// tempest run exits non-zero when a test fails; the results decide.
	out, runErr := runCmd(ws, env, runTimeout, tempestBin, "run", "--regex", regex, "--concurrency", fmt.Sprint(concurrency))
	if err := os.WriteFile(filepath.Join(dir, "run.log"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	runTime := time.Since(runStart)
	results, err := collect(ws, env, filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatalf("results (tempest run: %v):\n%s\n%s", runErr, err, ingottest.Tail(string(out), 30))
	}
	rep := summarize(results, expected)
	if err := os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(rep.text()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("Tempest %s: %d passed, %d failed (%d expected), %d skipped; setup %s, tempest run %s",
		regex, rep.passed, rep.failed, rep.expectedFailed, rep.skipped, setup.Round(time.Second), runTime.Round(time.Second))
	if len(results) == 0 {
		t.Fatalf("no test ran (tempest run: %v):\n%s", runErr, ingottest.Tail(string(out), 30))
	}
	for _, id := range rep.fixed {
		t.Logf("listed in %s but passed (remove it): %s", list, id)
	}
	// One line a failure (summary.txt has the tracebacks).
	for _, f := range rep.unexpected {
		t.Errorf("FAILED %s: %s", baseID(f.ID), cause(f.Reason))
	}
	if len(rep.unexpected) > 0 {
		t.Logf("%d unexpected failures; tracebacks in summary.txt (keep it with INGOT_TEMPEST_DIR=DIR)", len(rep.unexpected))
	}
}

// marker names a directory this suite made, so that a kept workspace is
// emptied before the next run (and no other directory ever is).
const marker = ".ingot-tempest"

// keptDir is INGOT_TEMPEST_DIR, emptied, or a temporary directory.
func keptDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("INGOT_TEMPEST_DIR")
	if dir == "" {
		return t.TempDir()
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(dir, marker)); err != nil {
			t.Fatalf("INGOT_TEMPEST_DIR=%s is not empty and was not made by this suite", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, marker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeTemplate(t *testing.T, path, text string, vars any) {
	t.Helper()
	tm, err := template.New(filepath.Base(path)).Option("missingkey=error").Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := tm.Execute(f, vars); err != nil {
		t.Fatal(err)
	}
}

// runCmd runs a command in its own process group (killed whole at the
// timeout) and returns its combined output.
func runCmd(dir string, env []string, timeout time.Duration, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd.CombinedOutput()
}

func mustRun(t *testing.T, dir string, env []string, timeout time.Duration, name string, args ...string) {
	t.Helper()
	if out, err := runCmd(dir, env, timeout, name, args...); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// serveBehind starts `ingot serve` with ingotConfig in dir and puts it in
// Keystone's catalogue (compute, image, network); it returns ingot's root URL.
func serveBehind(t *testing.T, ks *keystonetest.Env, dir string, vars map[string]any) string {
	t.Helper()
	cfgPath := filepath.Join(dir, "ingot.yaml")
	writeTemplate(t, cfgPath, ingotConfig, vars)
	ingot := ingottest.Serve(t, ingottest.Binary(t), cfgPath, ingottest.Options{Log: filepath.Join(dir, "ingot.log")}).API
	ks.RegisterService(t, "compute", "nova", ingot+"/v2.1")
	ks.RegisterService(t, "image", "glance", ingot+"/image")
	ks.RegisterService(t, "network", "neutron", ingot+"/network")
	return ingot
}
