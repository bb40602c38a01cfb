package contract

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/ironictest"
)

// profile is the kind of Ironic a check needs. Each target (simulator, real
// Ironic) runs one Env per profile, shared by the checks of that profile.
type profile int

const (
	// profMain: Fast deploys as fast as they go; LongDeploy nodes wait in
	// "wait call-back" far longer than any check runs.
	profMain profile = iota
	// profFailing: a short callback timeout, so custom-agent deploys fail.
	profFailing
	// profSlow: Fast deploys and undeploys stay locked in "deploying" /
	// "deleting" for seconds ([fake] deploy_delay on the real Ironic).
	profSlow
	// profRestart: like profSlow, restarted by its one check.
	profRestart
	numProfiles
)

// Env options per profile. The real Ironic counts whole seconds.
var (
	realOptions = [numProfiles]ironictest.RealOptions{
		profMain:    {CallbackTimeout: time.Hour},
		profFailing: {CallbackTimeout: 4 * time.Second},
		profSlow:    {CallbackTimeout: time.Hour, DeployDelay: 3 * time.Second},
		profRestart: {CallbackTimeout: time.Hour, DeployDelay: 3 * time.Second},
	}
	simOptions = [numProfiles]ironictest.SimOptions{
		profMain:    {CallbackTimeout: time.Hour},
		profFailing: {CallbackTimeout: 2 * time.Second},
		profSlow:    {CallbackTimeout: time.Hour, DeployTime: 4 * time.Second, UndeployTime: 4 * time.Second},
		profRestart: {CallbackTimeout: time.Hour, DeployTime: 4 * time.Second, UndeployTime: 4 * time.Second},
	}
)

// checkTimeout bounds one check (the slowest waits for a callback timeout).
const checkTimeout = 2 * time.Minute

// check is one named behaviour of the Ironic API.
type check struct {
	name    string
	profile profile
	// simSkip, when set, names a known divergence of the simulator: the
	// check is skipped on the simulator only, never on the real Ironic.
	simSkip string
	run     func(c *C)
}

// allChecks is the suite, in report order.
func allChecks() []check {
	var all []check
	for _, group := range [][]check{
		versionChecks, nodeChecks, listChecks, reserveChecks, deployChecks, day2Checks,
		longDeployChecks, failingChecks, lockedChecks, subresourceChecks,
	} {
		all = append(all, group...)
	}
	return all
}

// target is one Ironic implementation with Envs for each profile.
type target struct {
	name string                         // "sim" or "real"
	envs [numProfiles][]*ironictest.Env // shards: check i of a profile uses envs[p][i%len]
}

// realMainShards: the real Ironic serves one request at a time, and most
// checks use the main profile; two processes use both cores of a CI machine.
const realMainShards = 2

func realTarget(t *testing.T) *target {
	t.Helper()
	opts := append([]ironictest.RealOptions(nil), realOptions[:]...)
	for range realMainShards - 1 {
		opts = append(opts, realOptions[profMain])
	}
	begin := time.Now()
	envs := ironictest.StartRealMany(t, opts...)
	t.Logf("started %d real Ironics in %s", len(envs), time.Since(begin).Round(time.Millisecond))
	tg := &target{name: "real"}
	for p := range numProfiles {
		tg.envs[p] = []*ironictest.Env{envs[p]}
	}
	tg.envs[profMain] = append(tg.envs[profMain], envs[numProfiles:]...)
	return tg
}

// simTarget starts one simulator per profile; wrap, if not nil, wraps each
// simulator's handler (the teeth test breaks the simulator with it).
func simTarget(t *testing.T, wrap func(http.Handler) http.Handler) *target {
	t.Helper()
	tg := &target{name: "sim"}
	for p := range numProfiles {
		opts := simOptions[p]
		opts.Middleware = wrap
		tg.envs[p] = []*ironictest.Env{ironictest.StartSim(t, opts)}
	}
	return tg
}

// result of one check.
type result struct {
	err      error
	duration time.Duration
}

// runChecks runs each check as a subtest of t against tg and hands its
// outcome to report. All selected checks run at once, whatever -parallel
// says: each starts in its own goroutine before the subtest turns parallel
// and waits for it (the checks mostly wait on Ironic's clocks).
func runChecks(t *testing.T, tg *target, list []check, report func(t *testing.T, ck check, r result)) {
	var perProfile [numProfiles]int
	for _, ck := range list {
		shards := tg.envs[ck.profile]
		env := shards[perProfile[ck.profile]%len(shards)]
		perProfile[ck.profile]++
		t.Run(ck.name, func(t *testing.T) {
			if tg.name == "sim" && ck.simSkip != "" {
				t.Skipf("known simulator divergence: %s", ck.simSkip)
			}
			done := make(chan result, 1)
			go func() {
				begin := time.Now()
				err := execCheck(t, env, ck)
				done <- result{err: err, duration: time.Since(begin)}
			}()
			t.Parallel()
			report(t, ck, <-done)
		})
	}
}

// reportToT fails the subtest on a mismatch.
func reportToT(t *testing.T, ck check, r result) {
	t.Logf("%s in %s", ck.name, r.duration.Round(time.Millisecond))
	if r.err != nil {
		t.Errorf("%s: %v", ck.name, r.err)
	}
}

// C is what a check gets: raw HTTP at 1.78 on one Env, harness helpers
// whose failures fail the check, and a few shared steps. A check reports a
// mismatch with failf (which ends it); execCheck turns that into the
// check's error.
type C struct {
	// T is for ironictest helpers: its Fatal ends the check with an error
	// instead of failing the test.
	T    testing.TB
	Env  *ironictest.Env
	ctx  context.Context
	base string
	hc   *http.Client
	id   string // unique per run of a check: names, resource class
	rc   string
	n    int // nodes named so far
}

// checkFailure carries a check's error through panic to execCheck.
type checkFailure struct{ err error }

func (c *C) failf(format string, args ...any) {
	panic(checkFailure{fmt.Errorf(format, args...)})
}

func execCheck(t *testing.T, env *ironictest.Env, ck check) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	id := randomHex(4)
	c := &C{
		T: checkTB{t}, Env: env, ctx: ctx, base: env.URL,
		hc: &http.Client{Timeout: 30 * time.Second},
		id: id, rc: "ct-" + id,
	}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(checkFailure)
			if !ok {
				panic(r)
			}
			err = f.err
		}
	}()
	ck.run(c)
	return nil
}

// checkTB is the testing.TB a check hands to ironictest: a Fatal or Error
// ends the check with that error; everything else goes to the subtest.
type checkTB struct{ testing.TB }

func (checkTB) Fatal(args ...any)                 { panic(checkFailure{errors.New(fmt.Sprint(args...))}) }
func (checkTB) Fatalf(format string, args ...any) { panic(checkFailure{fmt.Errorf(format, args...)}) }
func (checkTB) Error(args ...any)                 { panic(checkFailure{errors.New(fmt.Sprint(args...))}) }
func (checkTB) Errorf(format string, args ...any) { panic(checkFailure{fmt.Errorf(format, args...)}) }
func (checkTB) FailNow()                          { panic(checkFailure{errors.New("FailNow")}) }
func (checkTB) Fail()                             { panic(checkFailure{errors.New("Fail")}) }
func (checkTB) Skip(args ...any)                  { panic(checkFailure{errors.New("skip: " + fmt.Sprint(args...))}) }
func (checkTB) Skipf(format string, args ...any) {
	panic(checkFailure{fmt.Errorf("skip: "+format, args...)})
}
func (checkTB) SkipNow() { panic(checkFailure{errors.New("SkipNow")}) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func sortStrings(s []string) { sort.Strings(s) }

func newUUID() string { return uuid.NewString() }

// restart restarts this check's Env (real: SIGKILL and start again).
func (c *C) restart() {
	c.Env.Restart(c.T)
	c.hc.CloseIdleConnections()
}

// name returns a fresh node name unique to this run of the check.
func (c *C) name() string {
	c.n++
	return fmt.Sprintf("ct-%s-%d", c.id, c.n)
}
