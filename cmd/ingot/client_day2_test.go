package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// opSteps plays the reconciler for a day-2 operation, one phase per poll:
// from rest into the operation's phase, then to where it ends (rest, when
// a power operation gives up).
func opSteps(rest map[lifecycle.OpKind]lifecycle.Phase) func(s *lifecycle.Server) bool {
	during := map[lifecycle.OpKind]lifecycle.Phase{
		lifecycle.OpReboot: lifecycle.PhaseRebooting, lifecycle.OpStop: lifecycle.PhasePoweringOff,
		lifecycle.OpStart: lifecycle.PhasePoweringOn, lifecycle.OpRebuild: lifecycle.PhaseRebuilding,
		lifecycle.OpRescue: lifecycle.PhaseRescuing, lifecycle.OpUnrescue: lifecycle.PhaseUnrescuing,
	}
	return func(s *lifecycle.Server) bool {
		if !s.OpPending() {
			return buildSteps(s)
		}
		if s.Phase.Up() {
			s.Phase = during[s.Op.Kind]
			return true
		}
		s.Phase, s.OpDone = rest[s.Op.Kind], s.OpGen
		return true
	}
}

var opRest = map[lifecycle.OpKind]lifecycle.Phase{
	lifecycle.OpReboot: lifecycle.PhaseActive, lifecycle.OpStop: lifecycle.PhaseStopped,
	lifecycle.OpStart: lifecycle.PhaseActive, lifecycle.OpRebuild: lifecycle.PhaseActive,
	lifecycle.OpRescue: lifecycle.PhaseRescued, lifecycle.OpUnrescue: lifecycle.PhaseActive,
}

// progress is the status and phase of each progress line.
func progress(out string) string {
	var states []string
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, "] "); strings.HasPrefix(line, "[") && i > 0 {
			f := strings.Fields(line[i+2:])
			states = append(states, f[0]+" "+f[2])
		}
	}
	return strings.Join(states, ",")
}

func TestCLIDay2Wait(t *testing.T) {
	f := newCLIFixture(t)
	f.step = opSteps(opRest)
	if _, _, err := f.run("server", "create", "vm1", "--flavor", "1", "--image", cliImage, "--wait"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		op   lifecycle.OpKind
		hard bool
		want string
	}{
		{[]string{"reboot", "vm1", "--hard"}, lifecycle.OpReboot, true, "HARD_REBOOT phase=rebooting,ACTIVE phase=active"},
		{[]string{"reboot", "vm1"}, lifecycle.OpReboot, false, "REBOOT phase=rebooting,ACTIVE phase=active"},
		{[]string{"stop", "vm1"}, lifecycle.OpStop, false, "ACTIVE phase=powering_off,SHUTOFF phase=stopped"},
		{[]string{"start", "vm1"}, lifecycle.OpStart, false, "SHUTOFF phase=powering_on,ACTIVE phase=active"},
		{[]string{"rebuild", "vm1", "--image", "debian-12"}, lifecycle.OpRebuild, false, "REBUILD phase=rebuilding,ACTIVE phase=active"},
		{[]string{"rescue", "vm1", "--password", "pw-1"}, lifecycle.OpRescue, false, "ACTIVE phase=rescuing,RESCUE phase=rescued"},
		{[]string{"unrescue", "vm1"}, lifecycle.OpUnrescue, false, "RESCUE phase=unrescuing,ACTIVE phase=active"},
		{[]string{"rebuild", "vm1"}, lifecycle.OpRebuild, false, "REBUILD phase=rebuilding,ACTIVE phase=active"},
	} {
		out, errOut, err := f.run(append([]string{"server"}, append(tc.args, "--wait")...)...)
		if err != nil {
			t.Fatalf("%v --wait: %v\n%s%s", tc.args, err, out, errOut)
		}
		if got := progress(out); got != tc.want {
			t.Errorf("%v: progress %q, want %q\n%s", tc.args, got, tc.want, out)
		}
		if !strings.Contains(out, " after ") {
			t.Errorf("%v: no final line\n%s", tc.args, out)
		}
		list, _ := f.store.ListServers(context.Background(), store.ListOptions{})
		if s := list[0]; s.Op.Kind != tc.op || s.Op.Hard != tc.hard || s.OpPending() {
			t.Errorf("%v recorded %+v (pending %v)", tc.args, s.Op, s.OpPending())
		}
		if tc.op == lifecycle.OpRescue && (!strings.Contains(out, "rescue password: pw-1")) {
			t.Errorf("rescue does not print the password:\n%s", out)
		}
	}

	out, _, err := f.run("server", "lock", "vm1", "--reason", "hands off", "--wait")
	if err != nil || !strings.Contains(out, "lock accepted") {
		t.Fatalf("lock: %v\n%s", err, out)
	}
	list, _ := f.store.ListServers(context.Background(), store.ListOptions{})
	if l := list[0].Lock; !l.Locked || l.Reason != "hands off" {
		t.Errorf("lock recorded %+v", l)
	}
	if _, _, err := f.run("server", "unlock", "vm1"); err != nil {
		t.Fatal(err)
	}
	out, _, err = f.run("server", "events", "vm1")
	for _, a := range []string{"reboot", "stop", "start", "rebuild", "rescue", "unrescue", "lock", "unlock"} {
		if err != nil || !strings.Contains(out, a) {
			t.Errorf("events lack %s: %v\n%s", a, err, out)
		}
	}

	// Refused by the state: the API's 409 text.
	_, _, err = f.run("server", "start", "vm1")
	if err == nil || !strings.Contains(err.Error(), "Cannot 'start' instance") {
		t.Errorf("start of an ACTIVE server: %v", err)
	}
	// An operation that gives up (the server rests ACTIVE after a stop).
	f.step = opSteps(map[lifecycle.OpKind]lifecycle.Phase{lifecycle.OpStop: lifecycle.PhaseActive})
	out, errOut, err := f.run("server", "stop", "vm1", "--wait")
	if !errors.Is(err, errOpFailed) || !strings.Contains(err.Error(), "ended with the server ACTIVE, not SHUTOFF") {
		t.Errorf("a stop that gave up: %v\n%s%s", err, out, errOut)
	}
}
