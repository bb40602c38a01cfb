// Package ironictest starts an Ironic for tests: the real one (Debian's
// Ironic 21.4, fake-hardware, SQLite, one process per Env) or the in-process
// simulator (internal/ironicsim), and offers a few helpers over plain HTTP that
// behave the same on both: enrol nodes, act on them out of band, read them.
//
// Which one a suite gets, by the repository's one rule (README, Tests): a
// test that needs the real Ironic runs when it is installed and is skipped
// when it is missing; INGOT_TEST_IRONIC=1 makes a missing Ironic a failure.
//   - StartReal: the real Ironic. Skipped when /usr/bin/ironic is missing
//     (install it with .ci/install-ironic.sh), unless INGOT_TEST_IRONIC=1, in
//     which case a missing or broken Ironic fails the test.
//   - StartSim: the simulator behind httptest, always available.
//   - Start: the real Ironic when it is installed (or INGOT_TEST_IRONIC=1,
//     as StartReal), else the simulator.
//
// Every helper talks to Ironic at microversion 1.78 (the one ingot pins) and
// calls t.Fatal when Ironic answers something unexpected. Facts about the real
// Ironic that shaped the helpers are in docs/ironic.md (cited by section).
package ironictest

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ironicsim"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// Microversion is the Ironic API version the helpers send.
const Microversion = "1.78"

// DefaultCallbackTimeout is how long a custom-agent deploy (LongDeploy and
// Failing nodes) sits in "wait call-back" before Ironic fails it, unless the
// options say otherwise.
const DefaultCallbackTimeout = 10 * time.Second

// EnvVar is the environment variable that selects the real Ironic: set to 1,
// Start uses it and StartReal fails (instead of skipping) when it cannot run.
const EnvVar = "INGOT_TEST_IRONIC"

// Env is one running Ironic (real or simulated).
type Env struct {
	// URL is the API root, e.g. http://127.0.0.1:40123 (no /v1, no trailing slash).
	URL string
	// Real is true for the real Ironic.
	Real bool
	// CallbackTimeout is how long a custom-agent deploy waits in
	// "wait call-back" before it becomes "deploy failed".
	CallbackTimeout time.Duration
	// DeployDelay is the fake deploy interface's per-step delay (real) or
	// half the simulated deploy time: a Fast deploy stays in "deploying",
	// locked, for about 2×DeployDelay, and an undeploy in "deleting" as long.
	// Zero means as fast as the Ironic goes.
	DeployDelay time.Duration

	// Sim is the simulator's Go API (nil for the real Ironic).
	Sim *ironicsim.Sim
	// AuthToken, when set, is sent as X-Auth-Token by the helpers (a real
	// Ironic started with RealOptions.Keystone).
	AuthToken string

	proc *realProc // nil for the simulator
	hc   *http.Client
}

// RealWanted reports whether INGOT_TEST_IRONIC asks for the real Ironic.
func RealWanted() bool {
	v := os.Getenv(EnvVar)
	return v == "1" || v == "true" || v == "yes"
}

// Options configures an Env started by Start, whichever Ironic it is.
type Options struct {
	// CallbackTimeout for custom-agent deploys (default DefaultCallbackTimeout).
	// The real Ironic counts whole seconds: it is rounded up.
	CallbackTimeout time.Duration
	// DeployDelay makes Fast deploys slow (see Env.DeployDelay). The real
	// Ironic counts whole seconds: it is rounded up.
	DeployDelay time.Duration
	// Keystone, for the real Ironic only, puts it behind Keystone
	// (auth_strategy = keystone; keystonemiddleware validates tokens with
	// these service credentials). The helpers then need Env.AuthToken.
	Keystone *Keystone
	// Notifications, for the real Ironic only, is the rabbit:// transport
	// URL Ironic publishes its versioned notifications to, at level info
	// (NewBus gives one: Bus.IronicURL); empty: none.
	Notifications string
	// Neutron, for the real Ironic only, enables the flat and neutron
	// network interfaces with a [neutron] section (needs Keystone: the
	// network endpoint is read from its catalog). Nodes keep noop unless
	// NodeSpec.NetworkInterface says otherwise.
	Neutron *Neutron
	// ShowInstanceSecrets, for the real Ironic only, lets every caller see
	// instance_info's secrets, the config drive among them (Ironic's
	// show_instance_secrets policy, "!" by default), as an operator may
	// allow it for adoption.
	ShowInstanceSecrets bool
	// Glance, for the real Ironic only and with Keystone, gives it a
	// [glance] section with Keystone's service credentials: Ironic finds
	// Glance in the catalog and reads the images it deploys there.
	Glance bool
	// Cinder, for the real Ironic only and with Keystone, enables the
	// cinder storage interface with a [cinder] section of Keystone's
	// service credentials (an admin: it reads the members' volumes);
	// Ironic finds Cinder (volumev3) in the catalog. Nodes keep noop
	// unless NodeSpec.StorageInterface says otherwise.
	Cinder bool
}

// Neutron is what a real Ironic needs to attach Neutron ports: service
// credentials (project service) and the cleaning and provisioning network
// by UUID (a name costs two GETs per request).
type Neutron struct {
	Username, Password, Network string
}

// Keystone is the [keystone_authtoken] of a real Ironic behind Keystone.
type Keystone struct {
	AuthURL, Username, Password, ProjectName string
}

// Start starts the real Ironic when it is installed or INGOT_TEST_IRONIC=1
// (then a missing one fails the test), and the simulator otherwise, for
// suites that run on both. The simulator runs on the wall clock.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	if RealWanted() || RealInstalled() {
		return StartReal(t, RealOptions(opts))
	}
	return StartSim(t, SimOptions{
		CallbackTimeout: opts.CallbackTimeout,
		DeployTime:      2 * opts.DeployDelay,
		UndeployTime:    2 * opts.DeployDelay,
	})
}

// Restart restarts the Ironic on the same database and URL. The real Ironic is
// killed with SIGKILL and started again (4–6 s). No graceful shutdown: a node
// caught in "deploying" becomes "deploy failed" with "The deploying state
// can't be resumed by conductor localhost. Moving to fail state."
// (docs/ironic.md §1), one in "deleting" becomes "error" with the same text
// for "deleting", and "wait call-back" stays. The simulator's Restart models
// the same (pinned by test/contract, restart.transient-states-fail).
func (e *Env) Restart(t testing.TB) {
	t.Helper()
	if e.proc == nil {
		e.restartSim(t)
		return
	}
	if err := e.proc.restart(); err != nil {
		t.Fatalf("ironictest: restart: %v", err)
	}
	e.hc.CloseIdleConnections()
}

// CPU is the CPU time the real Ironic's processes have used since it last
// started (zero for the simulator, or off Linux).
func (e *Env) CPU() time.Duration {
	if e.proc == nil {
		return 0
	}
	e.proc.mu.Lock()
	defer e.proc.mu.Unlock()
	if e.proc.cmd == nil {
		return 0
	}
	return testproc.GroupCPU(e.proc.cmd.Process.Pid)
}
