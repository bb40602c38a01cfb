// Package cindertest starts a real Cinder for tests: Debian's cinder-api,
// cinder-scheduler and cinder-volume (Cinder 21, Yoga) behind a real
// Keystone (internal/keystonetest), on a fresh PostgreSQL database and a
// fresh RabbitMQ vhost. The machines have no device-mapper, so no LVM:
// cinder-volume runs Cinder's own FakeLoggingVolumeDriver, subclassed in
// ingot_cinder_fake.py to hand out the iSCSI connection_info the LVM driver
// does (target_iqn iqn.2010-10.org.openstack:volume-<id>, portal
// 127.0.0.1:3260, lun 0, CHAP). Nothing serves that portal.
//
// Start takes 15-30 s and about 700 MiB (three Python daemons): start one
// per test binary where the tests can share it (one test with subtests).
//
// The one rule of the repository's tests (README): skipped when Cinder is
// missing, unless INGOT_TEST_IRONIC=1; then it fails. .ci/install-cinder.sh
// installs the packages.
package cindertest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/testproc"

	"github.com/ingot-dev/ingot/internal/keystonetest"
)

// Paths of Debian's Cinder and the tools the harness needs.
const (
	apiBin       = "/usr/bin/cinder-api"
	schedulerBin = "/usr/bin/cinder-scheduler"
	volumeBin    = "/usr/bin/cinder-volume"
	manageBin    = "/usr/bin/cinder-manage"
	psycopg2Dir  = "/usr/lib/python3/dist-packages/psycopg2"
	rabbitmqctl  = "/usr/sbin/rabbitmqctl"
)

// ServiceUser is Cinder's own account in Keystone (project service, role
// admin), the one keystonemiddleware validates tokens with.
const ServiceUser = "cinder"

// Microversion is the block-storage API version Nova uses for attachments
// (os-complete needs 3.44).
const Microversion = "3.44"

const startTimeout = 120 * time.Second

// Env is one running Cinder.
type Env struct {
	// Keystone is the identity service Cinder validates tokens with; its
	// catalog holds block-storage and volumev3 endpoints at URL.
	Keystone *keystonetest.Env
	// URL is the API root as the catalog names it for no project in
	// particular: http://127.0.0.1:PORT/v3 (Cinder 21 takes URLs without
	// the project id).
	URL string
	// Pool is the volume backend's pool, e.g. ingot-cinder@fake#fake.
	Pool string
	// SetupTime is how long Start took (Keystone included); SyncTime of it
	// went to cinder-manage db sync, ReadyTime to the daemons' start-up
	// until the scheduler listed the pool.
	SetupTime, SyncTime, ReadyTime time.Duration
	// Dir holds cinder.conf and the daemons' logs.
	Dir string

	daemons []*daemon
	hc      *http.Client
}

// Installed reports what of Cinder is missing ("" when nothing).
func Installed() string {
	for _, p := range []string{apiBin, schedulerBin, volumeBin, manageBin, psycopg2Dir, rabbitmqctl} {
		if _, err := os.Stat(p); err != nil {
			return p
		}
	}
	return ""
}

// Start starts Keystone and Cinder for the test; both stop when it ends.
func Start(t testing.TB) *Env {
	t.Helper()
	skipMissing(t)
	return StartWith(t, keystonetest.Start(t))
}

// StartWith starts Cinder behind ks, a Keystone other services share; it
// stops when the test ends. Cinder's endpoints go into ks's catalog.
func StartWith(t testing.TB, ks *keystonetest.Env) *Env {
	t.Helper()
	skipMissing(t)
	begin := time.Now()
	svc := ks.AddUser(t, ServiceUser, "service", "admin", "service")
	e := &Env{Keystone: ks, Dir: t.TempDir(), hc: &http.Client{Timeout: 30 * time.Second}}
	port, err := testproc.FreePort()
	if err != nil {
		t.Fatalf("cindertest: %v", err)
	}
	e.URL = fmt.Sprintf("http://127.0.0.1:%d/v3", port)
	// Every endpoint first: services cache the catalog from their first login.
	ks.RegisterService(t, "block-storage", "cinder", e.URL)
	ks.RegisterService(t, "volumev3", "cinderv3", e.URL)
	d := confData{Dir: e.Dir, Transport: vhost(t), Database: database(t), Keystone: ks.URL,
		User: svc.Name, Password: keystonetest.Password, Port: port}
	if err := writeFiles(e.Dir, d); err != nil {
		t.Fatalf("cindertest: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, d := range e.daemons {
				t.Logf("cindertest: last lines of %s:\n%s", d.log, testproc.Tail(d.log, 30))
			}
		}
		e.stop()
	})
	if err := e.start(t); err != nil {
		t.Fatalf("cindertest: %v", err)
	}
	e.SetupTime = time.Since(begin)
	return e
}

// skipMissing skips the test when Cinder is missing, or fails it when
// real services are wanted.
func skipMissing(t testing.TB) {
	t.Helper()
	if missing := Installed(); missing != "" {
		if keystonetest.Wanted() {
			t.Fatalf("cindertest: %s=1 but %s is missing (run .ci/install-cinder.sh)", keystonetest.EnvVar, missing)
		}
		t.Skipf("Cinder not installed (%s missing; run .ci/install-cinder.sh, or set %s=1 to make this a failure)", missing, keystonetest.EnvVar)
	}
}

// start syncs the schema, starts the three daemons and waits for the pool.
func (e *Env) start(t testing.TB) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	begin := time.Now()
	if err := run(ctx, e.Dir, manageBin, "--config-file", e.Dir+"/cinder.conf", "db", "sync"); err != nil {
		return err
	}
	e.SyncTime, begin = time.Since(begin), time.Now()
	for _, bin := range []string{volumeBin, schedulerBin, apiBin} {
		d, err := startDaemon(e.Dir, bin)
		if err != nil {
			return err
		}
		e.daemons = append(e.daemons, d)
	}
	// A volume created before the scheduler has the volume service's
	// capability report goes to error ("No valid backend was found").
	admin := e.Keystone.Token(t, "admin")
	for {
		pools, err := e.pools(ctx, admin)
		if err == nil && len(pools) > 0 {
			e.Pool, e.ReadyTime = pools[0], time.Since(begin)
			return nil
		}
		for _, d := range e.daemons {
			if d.exited() {
				return fmt.Errorf("%s exited while starting; last lines of %s:\n%s", d.name, d.log, testproc.Tail(d.log, 30))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no pool after %s (last: %v %v)", startTimeout, pools, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
