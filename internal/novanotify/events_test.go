package novanotify

import (
	"slices"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

var t0 = time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)

func srv(phase lifecycle.Phase, set ...func(*lifecycle.Server)) *lifecycle.Server {
	s := &lifecycle.Server{ID: "s", Name: "web", Desired: lifecycle.DesiredActive, Phase: phase, NodeID: "node"}
	if phase != lifecycle.PhasePending {
		s.LaunchedAt = t0
	}
	for _, f := range set {
		f(s)
	}
	return s
}

func unlaunched(s *lifecycle.Server) { s.LaunchedAt = time.Time{} }
func deleted(s *lifecycle.Server)    { s.Desired = lifecycle.DesiredDeleted }
func renamed(s *lifecycle.Server)    { s.Name = "db" }
func undo(s *lifecycle.Server)       { s.OpFallback = true }
func off(s *lifecycle.Server)        { s.PowerSeen = lifecycle.PowerOff }

func TestEvents(t *testing.T) {
	cases := []struct {
		name     string
		old, new *lifecycle.Server
		want     []string
	}{
		{"create", nil, srv(lifecycle.PhasePending), []string{CreateStart}},
		{"scheduled: same states", srv(lifecycle.PhasePending), srv(lifecycle.PhaseReserving, unlaunched), nil},
		{"reserved: task_state networking", srv(lifecycle.PhaseReserving, unlaunched), srv(lifecycle.PhaseNetworking, unlaunched), []string{Update}},
		{"built", srv(lifecycle.PhaseDeploying, unlaunched), srv(lifecycle.PhaseActive), []string{Update, CreateEnd}},
		{"build failed", srv(lifecycle.PhaseReleasing, unlaunched), srv(lifecycle.PhaseError, unlaunched), []string{Update, CreateError}},
		{"built server fails: no create.error", srv(lifecycle.PhaseActive), srv(lifecycle.PhaseError), []string{Update}},
		{"delete accepted", srv(lifecycle.PhaseActive), srv(lifecycle.PhaseActive, deleted), []string{Update, DeleteStart}},
		{"delete accepted again: nothing", srv(lifecycle.PhaseActive, deleted), srv(lifecycle.PhaseDeleting, deleted), nil},
		{"gone", srv(lifecycle.PhaseDeleting, deleted), srv(lifecycle.PhaseDeleted, deleted), []string{Update, DeleteEnd}},
		{"build deleted", srv(lifecycle.PhaseDeploying, unlaunched, deleted), srv(lifecycle.PhaseDeleted, unlaunched, deleted), []string{Update, DeleteEnd}},
		{"stop", srv(lifecycle.PhaseActive), srv(lifecycle.PhasePoweringOff), []string{Update, PowerOffStart}},
		{"stopped", srv(lifecycle.PhasePoweringOff), srv(lifecycle.PhaseStopped), []string{Update, PowerOffEnd}},
		{"start", srv(lifecycle.PhaseStopped), srv(lifecycle.PhasePoweringOn), []string{Update, PowerOnStart}},
		{"started", srv(lifecycle.PhasePoweringOn), srv(lifecycle.PhaseActive), []string{Update, PowerOnEnd}},
		{"reboot", srv(lifecycle.PhaseActive), srv(lifecycle.PhaseRebooting), []string{Update, RebootStart}},
		{"rebooted", srv(lifecycle.PhaseRebooting), srv(lifecycle.PhaseActive), []string{Update, RebootEnd}},
		{"reboot failed", srv(lifecycle.PhaseRebooting), srv(lifecycle.PhaseError), []string{Update, RebootError}},
		{"rebuild", srv(lifecycle.PhaseActive), srv(lifecycle.PhaseRebuilding), []string{Update, RebuildStart}},
		{"rebuilt", srv(lifecycle.PhaseRebuilding), srv(lifecycle.PhaseActive), []string{Update, RebuildEnd}},
		{"rebuilt, stopped again", srv(lifecycle.PhaseRebuilding), srv(lifecycle.PhaseStopped), []string{Update, RebuildEnd}},
		{"power-off failed: Nova has no power_off.error", srv(lifecycle.PhasePoweringOff), srv(lifecycle.PhaseError), []string{Update}},
		{"delete during a reboot: no reboot.end", srv(lifecycle.PhaseRebooting), srv(lifecycle.PhaseDeleting, deleted), []string{Update, DeleteStart}},
		{"renamed", srv(lifecycle.PhaseActive), srv(lifecycle.PhaseActive, renamed), []string{Update}},
		{"attach", srv(lifecycle.PhaseActive), srv(lifecycle.PhaseAttachingVolume), []string{VolumeAttachStart}},
		{"attached", srv(lifecycle.PhaseAttachingVolume), srv(lifecycle.PhaseActive), []string{VolumeAttachEnd}},
		{"attach failed: undone", srv(lifecycle.PhaseAttachingVolume), srv(lifecycle.PhaseDetachingVolume, undo), []string{VolumeAttachError}},
		{"undone: nothing more", srv(lifecycle.PhaseDetachingVolume, undo), srv(lifecycle.PhaseActive), nil},
		{"detach", srv(lifecycle.PhaseStopped), srv(lifecycle.PhaseDetachingVolume, off), []string{VolumeDetachStart}},
		{"detached", srv(lifecycle.PhaseDetachingVolume, off), srv(lifecycle.PhaseStopped), []string{VolumeDetachEnd}},
		{"bookkeeping: nothing", srv(lifecycle.PhaseActive), srv(lifecycle.PhaseActive, func(s *lifecycle.Server) { s.PortsAllocated = true }), nil},
	}
	for _, c := range cases {
		if got := Events(c.old, c.new); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
