// Package novatest starts a real Nova for tests: Debian's nova-api,
// nova-conductor, nova-scheduler and nova-compute with the Ironic driver
// (Nova 26, Zed), and Placement, behind a keystonetest Keystone whose
// catalog gets their "compute" and "placement" endpoints, on fresh
// PostgreSQL databases and a fresh RabbitMQ vhost. It is the cloud an
// operator moves from when ingot adopts Nova's instances.
//
// Nova needs Neutron even for servers without ports (it reads security
// groups there) and Glance for images: start neutrontest and glancetest
// behind the same Keystone first. Nova talks to the Ironic given
// (endpoint_override) without authentication, or with its service user's
// token (Options.IronicAuth).
//
// A start costs 1.5-2.5 min on this 2-core machine (most of it the four
// schema syncs, then the daemons) and ~850 MiB over five processes: start
// one per test binary.
//
// Skipped when Nova is missing, unless INGOT_TEST_IRONIC=1: then a missing
// or broken Nova fails the test. .ci/install-nova.sh installs the packages.
package novatest

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/servicetest"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// Paths of Debian's Nova and Placement.
const (
	apiBin       = "/usr/bin/nova-api"
	conductorBin = "/usr/bin/nova-conductor"
	schedulerBin = "/usr/bin/nova-scheduler"
	computeBin   = "/usr/bin/nova-compute"
	manageBin    = "/usr/bin/nova-manage"
	placementBin = "/usr/bin/placement-api"
	placementMgr = "/usr/bin/placement-manage"
	pasteIni     = "/etc/nova/api-paste.ini"
	ironicDriver = "/usr/lib/python3/dist-packages/nova/virt/ironic/driver.py"
	script       = ".ci/install-nova.sh"
)

// Host is the nova-compute service's host: every Ironic node Nova manages
// is a hypervisor of it (instance_info.nova_host_id on a deployed node).
const Host = "ingot-nova-compute"

// Env is one running Nova.
type Env struct {
	// URL is the compute API as the catalog names it:
	// http://127.0.0.1:PORT/v2.1.
	URL string
	// Keystone is the identity service Nova validates tokens with.
	Keystone *keystonetest.Env
	// ServiceUser is Nova's own user in project service (admin, service).
	ServiceUser string
	// PlacementURL is Placement's root.
	PlacementURL string
	// Dir holds the configuration and the daemons' logs.
	Dir string
	// SetupTime is how long Start took; SyncTime of it went to the schema.
	SetupTime, SyncTime time.Duration

	procs   []*servicetest.Proc
	compute *servicetest.Proc
	manage  []string // nova-manage with both configuration files
	hc      *http.Client
}

// Options change what Start configures.
type Options struct {
	// IronicAuth: the Ironic is behind ks; Nova calls it with its service
	// user's token (by default without authentication).
	IronicAuth bool
	// PowerSync is nova-compute's sync_power_state_interval in seconds
	// (0: Nova's default, 600): how soon Nova sees a node powered on or off.
	PowerSync int
}

// Start starts Placement and Nova behind ks for the test, managing the
// nodes of the Ironic at ironicURL, and stops them when the test ends.
func Start(t testing.TB, ks *keystonetest.Env, ironicURL string) *Env {
	t.Helper()
	return StartWith(t, ks, ironicURL, Options{})
}

// StartWith is Start with options.
func StartWith(t testing.TB, ks *keystonetest.Env, ironicURL string, o Options) *Env {
	t.Helper()
	servicetest.Require(t, script, apiBin, conductorBin, schedulerBin, computeBin, manageBin,
		placementBin, placementMgr, pasteIni, ironicDriver)
	begin := time.Now()
	// Every endpoint first: nova-compute caches the catalog at its first login.
	pl := servicetest.Prepare(t, ks, "placement", "placement")
	nv := servicetest.PrepareAt(t, ks, "compute", "nova", "/v2.1", "state", "lock", "instances")
	e := &Env{URL: nv.URL + "/v2.1", Keystone: ks, ServiceUser: nv.User, Dir: nv.Dir, PlacementURL: pl.URL,
		hc: &http.Client{Timeout: 60 * time.Second}}

	auth := render(t, serviceAuth, map[string]any{"AuthURL": strings.TrimSuffix(ks.URL, "/v3"),
		"User": nv.User, "Password": keystonetest.Password})
	plConf := filepath.Join(pl.Dir, "placement.conf")
	write(t, plConf, placementConf, map[string]any{"DB": servicetest.Database(t), "Authtoken": pl.Authtoken})
	conf := filepath.Join(e.Dir, "nova.conf")
	write(t, conf, novaConf, map[string]any{"Host": Host, "Port": nv.Port, "Transport": servicetest.Vhost(t),
		"Dir": e.Dir, "Ironic": ironicURL, "Service": auth, "Authtoken": nv.Authtoken,
		"IronicAuth": o.IronicAuth, "PowerSync": o.PowerSync})
	dbConf := filepath.Join(e.Dir, "nova-db.conf")
	cell0 := servicetest.Database(t)
	write(t, dbConf, databasesConf, map[string]any{"API": servicetest.Database(t), "Cell1": servicetest.Database(t)})

	sync := time.Now()
	e.manage = []string{manageBin, "--config-file", conf, "--config-file", dbConf}
	manage := func(args ...string) {
		t.Helper()
		if err := servicetest.Exec(e.Dir, nil, append(slices.Clone(e.manage), args...)...); err != nil {
			t.Fatalf("novatest: %v", err)
		}
	}
	if err := servicetest.Exec(pl.Dir, nil, placementMgr, "--config-file", plConf, "db", "sync"); err != nil {
		t.Fatalf("novatest: %v", err)
	}
	manage("api_db", "sync")
	manage("cell_v2", "map_cell0", "--database_connection", cell0)
	manage("cell_v2", "create_cell", "--name", "cell1")
	manage("db", "sync")
	e.SyncTime = time.Since(sync)

	e.run(t, servicetest.Command{Name: "placement", Dir: pl.Dir, Port: pl.Port, Ready: pl.URL + "/",
		Argv: []string{placementBin, "--host", "127.0.0.1", "--port", fmt.Sprint(pl.Port), "--", "--config-file", plConf}})
	withDB := []string{"--config-file", conf, "--config-file", dbConf}
	for _, bin := range []string{conductorBin, schedulerBin} {
		e.run(t, servicetest.Command{Name: filepath.Base(bin), Dir: e.Dir,
			Argv: append(append([]string{bin}, withDB...), "--log-file", filepath.Join(e.Dir, filepath.Base(bin)+".file.log"))})
	}
	e.run(t, servicetest.Command{Name: "nova-compute", Dir: e.Dir,
		Argv: []string{computeBin, "--config-file", conf, "--log-file", filepath.Join(e.Dir, "nova-compute.file.log")}})
	e.compute = e.procs[len(e.procs)-1]
	e.run(t, servicetest.Command{Name: "nova-api", Dir: e.Dir, Port: nv.Port, Ready: nv.URL + "/",
		Argv: append(append([]string{apiBin}, withDB...), "--log-file", filepath.Join(e.Dir, "nova-api.file.log"))})
	e.SetupTime = time.Since(begin)
	return e
}

func (e *Env) run(t testing.TB, c servicetest.Command) {
	t.Helper()
	e.procs = append(e.procs, servicetest.Run(t, c))
}

// Logs are the daemons' log files (Nova's own, written with --log-file).
func (e *Env) Logs() []string {
	files, _ := filepath.Glob(filepath.Join(e.Dir, "*.file.log"))
	return files
}

// LogTail is the last lines of every daemon's log, for a failing test.
func (e *Env) LogTail(lines int) string {
	var b strings.Builder
	for _, f := range e.Logs() {
		fmt.Fprintf(&b, "--- %s\n%s\n", filepath.Base(f), testproc.Tail(f, lines))
	}
	return b.String()
}

func render(t testing.TB, tmpl *template.Template, data any) string {
	t.Helper()
	var b bytes.Buffer
	if err := tmpl.Execute(&b, data); err != nil {
		t.Fatalf("novatest: %v", err)
	}
	return b.String()
}

func write(t testing.TB, path string, tmpl *template.Template, data any) {
	t.Helper()
	if err := os.WriteFile(path, []byte(render(t, tmpl, data)), 0o600); err != nil {
		t.Fatalf("novatest: %v", err)
	}
}
