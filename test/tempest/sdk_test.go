package tempest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/glancetest"
	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/neutrontest"
)

// SDKEnvVar turns on TestOpenStackSDK: openstacksdk's own functional compute
// tests (Debian's python3-openstacksdk ships them) against `ingot serve`
// behind a real Keystone, with a real neutron-server and glance-api as its
// network and image backends (the server tests create their own network,
// the image tests write image metadata). It fails on a failing test not
// listed, with its reason, in sdk-expected-failures.txt.
const SDKEnvVar = "INGOT_OPENSTACKSDK"

// sdkSuite is the functional compute tests' package.
const sdkSuite = "openstack.tests.functional.compute.v2"

// sdkTop is where Debian installs it.
const sdkTop = "/usr/lib/python3/dist-packages"

// sdkConfig is ingotConfig with Neutron and Glance in place of the
// configured networks and images.
var sdkConfig = strings.NewReplacer(
	"networks:\n  - {name: "+network+", cidr: 10.20.0.0/22}\n", "network:\n  backend: neutron\n",
	"images:\n", "image:\n  backend: glance\n",
	"  - {id: "+imageRef+", name: debian-12, url: \"http://images.example/debian-12.qcow2\"}\n", "",
	"  - {id: "+imageRefAlt+", name: ubuntu-24.04, url: \"http://images.example/ubuntu-24.04.qcow2\"}\n", "",
).Replace(ingotConfig)

// cloudsYAML gives the suite's three clouds, as the SDK's own tox sets them:
// devstack (a member), devstack-alt (a member of another project) and
// devstack-admin.
const cloudsYAML = `clouds:
{{- range .}}
  {{.Cloud}}:
    auth:
      auth_url: {{.AuthURL}}
      username: {{.User}}
      password: {{.Password}}
      project_name: {{.Project}}
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    identity_api_version: 3
{{- end}}
`

func TestOpenStackSDK(t *testing.T) {
	if v := os.Getenv(SDKEnvVar); v != "1" && v != "true" && v != "yes" {
		t.Skipf("set %s=1 to run openstacksdk's functional compute tests (minutes)", SDKEnvVar)
	}
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("%s=1 but %s is missing (run .ci/install-sdk-tests.sh)", SDKEnvVar, python)
	}
	expected, err := readExpected("sdk-expected-failures.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir := keptDir(t)
	ks := keystonetest.Start(t)
	neutrontest.Start(t, ks)
	images := glancetest.Start(t, ks)
	// The suite looks its users' project up by name (demo) and asks for an
	// image by name.
	ks.AddUser(t, "demo", "demo", "member")
	ks.AddUser(t, "alt_demo", "alt_demo", "member")
	images.UploadImage(t, "admin", glancetest.ImageOptions{Name: "debian-12", Visibility: "public",
		Properties: map[string]string{"os_distro": "debian"}})
	cfgPath := filepath.Join(dir, "ingot.yaml")
	writeTemplate(t, cfgPath, sdkConfig, map[string]any{"Dir": dir, "Keystone": ks.URL, "Password": keystonetest.Password})
	ingot := ingottest.Serve(t, ingottest.Binary(t), cfgPath, ingottest.Options{Log: filepath.Join(dir, "ingot.log")}).API
	ks.RegisterService(t, "compute", "nova", ingot+"/v2.1")
	ks.RegisterService(t, "volumev3", "cinderv3", ingot+"/volume/v3/%(project_id)s")

	type cloud struct{ Cloud, AuthURL, User, Password, Project string }
	var clouds []cloud
	for name, user := range map[string]string{"devstack": "demo", "devstack-alt": "alt_demo", "devstack-admin": "admin"} {
		clouds = append(clouds, cloud{name, ks.URL, user, keystonetest.Password, ks.Users[user].ProjectName})
	}
	sort.Slice(clouds, func(i, j int) bool { return clouds[i].Cloud < clouds[j].Cloud })
	cloudsPath := filepath.Join(dir, "clouds.yaml")
	writeTemplate(t, cloudsPath, cloudsYAML, clouds)

	env := append(os.Environ(), "OS_CLIENT_CONFIG_FILE="+cloudsPath, "OS_CLOUD=devstack-admin", "OS_TEST_TIMEOUT=600",
		"OPENSTACKSDK_IMAGE=debian-12", "OPENSTACKSDK_FLAVOR=bm.small", "OPENSTACKSDK_FUNC_TEST_TIMEOUT=120")
	begin := time.Now()
	stream := filepath.Join(dir, "sdk.subunit")
	out, runErr := runCmd(dir, env, 20*time.Minute, "/bin/sh", "-c", python+" -m subunit.run discover -s "+
		filepath.Join(sdkTop, strings.ReplaceAll(sdkSuite, ".", "/"))+" -t "+sdkTop+" > "+stream)
	results, err := readSubunit(dir, env, stream, filepath.Join(dir, "sdk.json"))
	if err != nil || len(results) == 0 {
		t.Fatalf("no results (%v, %v):\n%s", runErr, err, ingottest.Tail(string(out), 40))
	}
	var passed, failed, xfailed, skipped int
	var unexpected, fixed []string
	for _, r := range results {
		switch {
		case r.Status == "success":
			passed++
			if _, ok := expected[r.ID]; ok {
				fixed = append(fixed, r.ID)
			}
		case r.Status == "skip":
			skipped++
		case expected[r.ID] != "":
			failed++
			xfailed++
		default:
			failed++
			unexpected = append(unexpected, r.ID+":\n"+ingottest.Tail(r.Reason, 12))
		}
	}
	sort.Strings(unexpected)
	sort.Strings(fixed)
	t.Logf("openstacksdk functional compute: %d passed, %d failed (%d expected), %d skipped of %d in %s",
		passed, failed, xfailed, skipped, len(results), time.Since(begin).Round(time.Second))
	for _, name := range fixed {
		t.Logf("%s passes now: take it off sdk-expected-failures.txt", name)
	}
	if len(unexpected) > 0 {
		t.Errorf("unexpected failures (results: %s; ingot's log: %s):\n%s", filepath.Join(dir, "sdk.json"),
			filepath.Join(dir, "ingot.log"), strings.Join(unexpected, "\n"))
	}
}
