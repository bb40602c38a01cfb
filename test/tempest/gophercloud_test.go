package tempest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"

	"github.com/ingot-dev/ingot/internal/keystonetest"
)

// GophercloudEnvVar turns on TestGophercloud: gophercloud's own compute
// acceptance tests (the version in go.mod, from the module cache) against
// `ingot serve` behind a real Keystone, with a real neutron-server and
// glance-api as its backends, as admin (its RequireAdmin wants a user
// named admin). It fails on a failing test not listed, with its
// reason, in gophercloud-expected-failures.txt.
const GophercloudEnvVar = "INGOT_GOPHERCLOUD"

// GophercloudRunEnvVar, when set, is a regular expression: only the suite's
// tests it matches run (one test while working on it).
const GophercloudRunEnvVar = "INGOT_GOPHERCLOUD_RUN"

const gophercloudModule = "github.com/gophercloud/gophercloud/v2"

func gophercloudWanted() bool {
	v := os.Getenv(GophercloudEnvVar)
	return v == "1" || v == "true" || v == "yes"
}

func TestGophercloud(t *testing.T) {
	if !gophercloudWanted() {
		t.Skipf("set %s=1 to run gophercloud's compute acceptance tests (minutes)", GophercloudEnvVar)
	}
	expected, err := readExpected("gophercloud-expected-failures.txt")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", gophercloudModule).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", gophercloudModule, err)
	}
	modDir := strings.TrimSpace(string(out))
	dir := t.TempDir()

	ks := keystonetest.Start(t)
	// With a cloud's Neutron and Glance as ingot's backends, as a user's
	// cloud has them: the security group tests need Neutron's groups.
	// Its volumes are ingot's embedded block-storage API (below): no Cinder,
	// whose block-storage entry the suite would take instead.
	image, _ := startCloud(t, ks, false)
	cfg := filepath.Join(dir, "ingot.yaml")
	writeTemplate(t, cfg, sdkConfig, map[string]any{"Dir": dir, "Keystone": ks.URL, "Password": keystonetest.Password})
	ingot := ingottest.Serve(t, ingottest.Binary(t), cfg, ingottest.Options{Log: filepath.Join(dir, "ingot.log")}).API
	ks.RegisterService(t, "compute", "nova", ingot+"/v2.1")
	ks.RegisterService(t, "volumev3", "cinderv3", ingot+"/volume/v3/%(project_id)s")

	admin := ks.Users["admin"]
	env := append(os.Environ(), "GOFLAGS=-mod=mod",
		"OS_AUTH_URL="+ks.URL, "OS_USERNAME=admin", "OS_PASSWORD="+keystonetest.Password,
		"OS_PROJECT_NAME="+admin.ProjectName, "OS_DOMAIN_NAME=Default", "OS_REGION_NAME=RegionOne",
		"OS_IMAGE_ID="+image, "OS_FLAVOR_ID="+flavorRef, "OS_FLAVOR_ID_RESIZE="+flavorAlt, "OS_NETWORK_NAME="+network,
		// Asked for by the suite's setup though the compute tests use neither.
		"OS_POOL_NAME=public", "OS_EXTGW_ID=00000000-0000-0000-0000-000000000000")
	// One process a test: a test that panics (one does, on a nil it does
	// not check) would end the others.
	suite := filepath.Join(dir, "compute.test")
	build := exec.Command("go", "test", "-c", "-tags", "acceptance", "-o", suite, "./internal/acceptance/openstack/compute/v2/")
	build.Dir, build.Env = modDir, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build gophercloud's compute acceptance tests: %v\n%s", err, out)
	}
	list, err := exec.Command(suite, "-test.list", ".").Output()
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	only, err := regexp.Compile(os.Getenv(GophercloudRunEnvVar))
	if err != nil {
		t.Fatalf("%s: %v", GophercloudRunEnvVar, err)
	}
	status := map[string]string{}
	output := map[string]string{}
	for _, name := range strings.Fields(string(list)) {
		if !strings.HasPrefix(name, "Test") || !only.MatchString(name) {
			continue
		}
		cmd := exec.Command(suite, "-test.run", "^"+name+"$", "-test.v", "-test.timeout", "10m")
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		output[name] = string(out)
		switch {
		case err != nil:
			status[name] = "fail"
		case strings.Contains(string(out), "--- SKIP: "+name):
			status[name] = "skip"
		default:
			status[name] = "pass"
		}
	}
	if len(status) == 0 {
		t.Fatalf("no test ran:\n%s", list)
	}
	var passed, failed, xfailed, skipped int
	var unexpected, fixed []string
	for name, st := range status {
		switch {
		case st == "pass":
			passed++
			if _, ok := expected[name]; ok {
				fixed = append(fixed, name)
			}
		case st == "skip":
			skipped++
		case expected[name] != "":
			failed++
			xfailed++
		default:
			failed++
			unexpected = append(unexpected, name)
		}
	}
	sort.Strings(unexpected)
	sort.Strings(fixed)
	t.Logf("gophercloud compute acceptance: %d passed, %d failed (%d expected), %d skipped; %s", passed, failed, xfailed, skipped, time.Now().UTC().Format(time.RFC3339))
	for _, name := range fixed {
		t.Logf("%s passes now: take it off gophercloud-expected-failures.txt", name)
	}
	for _, name := range unexpected {
		t.Errorf("%s failed:\n%s", name, ingottest.Tail(output[name], 15))
	}
	if len(unexpected) > 0 {
		fmt.Fprintf(os.Stderr, "ingot log: %s\n", filepath.Join(dir, "ingot.log"))
	}
}
