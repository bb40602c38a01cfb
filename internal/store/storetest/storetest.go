// Package storetest is the conformance suite of store.Store: every
// implementation (SQLite, PostgreSQL, a fake) runs Run from its own tests.
//
// Beyond the contracts written in store.go, the suite pins these choices,
// which callers may rely on:
//   - CreateServer sets s.Version to 1; SaveServer and RequestDelete each
//     add one to the stored version (RequestDelete only when it changes
//     something).
//   - Times read back Equal to what was written, to the nanosecond, in UTC.
//   - ListServers: Name is a case-sensitive literal substring (no
//     wildcards); Status is case-insensitive and an unknown status lists
//     nothing (no error); Limit <= 0 and Limit > 1000 mean 1000; an
//     unknown sort field is an error; a server never launched sorts first
//     by launched_at ascending, one without a node first by node_id.
//   - Actions, AllEvents: ErrNotFound for an unknown server; Events:
//     ErrNotFound for an unknown action.
//   - SaveServer: ErrNotFound or ErrConflict for an unknown id.
//   - UpdateServer adds one to the stored version, like SaveServer; one that
//     records an attach holds its volume in the same write.
//   - CreatePort: ErrExists for a duplicate id or a second port of one
//     server on one network.
//   - CreateVolume stores an available volume whatever holder fields it is
//     given; ListVolumes treats Limit like ListServers; ServerVolumes lists
//     boot volumes (by boot index) before data volumes; UpdateVolume refuses
//     the status available (ReleaseVolume frees a volume).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// Run runs the suite. open must return a new, empty store for each call;
// Run closes it when the subtest ends.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, st store.Store)
	}{
		{"CreateGetRoundTrip", testCreateGet},
		{"SaveRoundTrip", testSaveRoundTrip},
		{"ReadServer", testReadServer},
		{"CompareAndSwap", testCAS},
		{"SaveKeepsAPIFields", testSaveKeepsAPIFields},
		{"UpdateServer", testUpdateServer},
		{"RequestDelete", testRequestDelete},
		{"DeleteWinsOverInFlightStep", testDeleteWins},
		{"NodeTaken", testNodeTaken},
		{"NeedsWork", testNeedsWork},
		{"ServersInPhaseAndCount", testServersInPhase},
		{"ListPaging", testListPaging},
		{"ListLimit", testListLimit},
		{"ListNameFilter", testListName},
		{"ListStatusFilter", testListStatus},
		{"ListTagFilters", testListTags},
		{"ListChanges", testListChanges},
		{"ListSort", testListSort},
		{"EventsAndActions", testEventsActions},
		{"Ports", testPorts},
		{"PortsByCreation", testPortsByCreation},
		{"NeutronPorts", testNeutronPorts},
		{"Adopt", testAdopt},
		{"Volumes", testVolumes},
		{"VolumeHolds", testVolumeHolds},
		{"VolumeStranded", testVolumeStranded},
		{"VolumeMadeHeld", testVolumeMadeHeld},
		{"CreateServerReservesVolumes", testVolumesServer},
		{"VolumeAttachment", testVolumeAttachment},
		{"AttachReserves", testAttachReserves},
		{"CreateServerVolumeRace", testVolumeRace},
		{"Concurrency", testConcurrency},
		{"ListProject", testListProject},
		{"QuotaCreate", testQuotaCreate},
		{"QuotaCreateMany", testQuotaCreateMany},
		{"QuotaRace", testQuotaRace},
		{"ProjectVolumes", testProjectVolumes},
		{"Keypairs", testKeypairs},
		{"ConsoleQueries", testConsoleQueries},
		{"LeaseClaim", testLeaseClaim},
		{"LeaseExpiry", testLeaseExpiry},
		{"LeaseFence", testLeaseFence},
		{"Flavors", testFlavors},
		{"FlavorSeed", testFlavorSeed},
		{"ServerGroups", testServerGroups},
		{"Services", testServices},
		{"Aggregates", testAggregates},
		{"IDsNotReused", testIDsNotReused},
		{"AdminRevision", testAdminRevision},
		{"QuotaClasses", testQuotaClasses},
		{"Outbox", testOutbox},
		{"OutboxClaim", testOutboxClaim},
		{"Ping", func(t *testing.T, st store.Store) {
			if err := st.Ping(t.Context()); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := open(t)
			t.Cleanup(func() {
				if err := st.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, st)
		})
	}
}

// T0 is the suite's base instant: nanoseconds, and not in UTC, so that
// precision and time-zone normalization are both exercised.
var T0 = time.Date(2026, 11, 30, 13, 4, 5, 123456789, time.FixedZone("CET", 3600))

// MinimalServer is a new pending server with only what CreateServer needs.
func MinimalServer(id string, created time.Time) *lifecycle.Server {
	return &lifecycle.Server{
		ID: id, Name: "srv-" + id, ProjectID: "project", UserID: "user",
		Desired: lifecycle.DesiredActive, Phase: lifecycle.PhasePending,
		CreatedAt: created, CreateRequestID: "req-create-" + id,
	}
}

// FullServer has every field set to a non-zero value.
func FullServer(id string) *lifecycle.Server {
	return &lifecycle.Server{
		ID: id, Name: "full-" + id, ProjectID: "project-1", UserID: "user-1",
		Spec: lifecycle.Spec{
			FlavorID: "flavor-1", ImageID: "image-1", ResourceClass: "baremetal.large",
			ImageSource: "http://images/x.qcow2", ImageChecksum: "sha256:abc", RootGB: 40,
			Networks: []string{"net-a", "net-b"}, Metadata: map[string]string{"k": "v", "role": "db"},
			UserData: "I2Nsb3VkLWNvbmZpZw==", Hostname: "host-" + id, KeyName: "key-1",
			// No Volumes: CreateServer reserves them in the registry, so a
			// server with volumes needs them created first (see testVolumesServer).
		},
		Desired: lifecycle.DesiredActive, Phase: lifecycle.PhaseDeploying,
		NodeID: "node-" + id, DeployRequested: true, PortsAllocated: true,
		VolumesOnNode: true, VolumesReleased: true,
		Excluded: []string{"node-x", "node-y"},
		Attempts: []lifecycle.Attempt{
			{Node: "node-x", Step: lifecycle.StepDeploy, Reason: lifecycle.ReasonDeployFailed, Message: "boom", At: T0.Add(time.Second)},
			{Node: "node-y", Step: lifecycle.StepReserve, Reason: lifecycle.ReasonNodeDeleted, Message: "gone", At: T0.Add(2 * time.Second)},
		},
		Fault: &lifecycle.Fault{Reason: lifecycle.ReasonNodeDeleted, Message: "node-y deleted", Node: "node-y",
			Step: lifecycle.StepReserve, At: T0.Add(3 * time.Second)},
		MaintenanceSince:  T0.Add(4 * time.Second),
		CreatedAt:         T0,
		UpdatedAt:         T0.Add(5 * time.Second),
		PhaseSince:        T0.Add(6 * time.Second),
		Deadline:          T0.Add(time.Hour),
		DeleteRequestedAt: T0.Add(7 * time.Second),
		LaunchedAt:        T0.Add(8 * time.Second),
		CreateRequestID:   "req-c-" + id,
		DeleteRequestID:   "req-d-" + id,
		DeleteFrom:        lifecycle.PhaseStopped,
		Op: lifecycle.Op{Kind: lifecycle.OpRebuild, RequestID: "req-op-" + id, At: T0.Add(9 * time.Second),
			RescuePassword: "pw"},
		OpGen: 3, OpDone: 2, OpSent: true, OpFallback: true, StopAfterRebuild: true, PowerSeen: lifecycle.PowerOff, Held: true,
		Lock: lifecycle.Lock{Locked: true, By: "admin", Reason: "audit"},
	}
}

// Normalize returns a deep copy with every time in UTC (and without a
// monotonic reading), so that reflect.DeepEqual compares instants.
func Normalize(s *lifecycle.Server) *lifecycle.Server {
	c := s.Clone()
	c.Op.At = c.Op.At.UTC()
	for _, p := range []*time.Time{&c.MaintenanceSince, &c.CreatedAt, &c.UpdatedAt, &c.PhaseSince,
		&c.Deadline, &c.DeleteRequestedAt, &c.LaunchedAt, &c.CapacityWaitSince} {
		*p = p.UTC()
	}
	for i := range c.Attempts {
		c.Attempts[i].At = c.Attempts[i].At.UTC()
	}
	if c.Fault != nil {
		c.Fault.At = c.Fault.At.UTC()
	}
	return c
}

// EqualServers reports whether a and b are equal up to time zones.
func EqualServers(a, b *lifecycle.Server) bool {
	return reflect.DeepEqual(Normalize(a), Normalize(b))
}

func requireServer(t *testing.T, got, want *lifecycle.Server) {
	t.Helper()
	if !EqualServers(got, want) {
		t.Fatalf("server differs\n got: %s\nwant: %s", dump(got), dump(want))
	}
}

func dump(s *lifecycle.Server) string {
	n := Normalize(s)
	f := "<nil>"
	if n.Fault != nil {
		f = fmt.Sprintf("%+v", *n.Fault)
	}
	return fmt.Sprintf("%+v fault=%s", *n, f)
}

func mustCreate(t *testing.T, st store.Store, s *lifecycle.Server) *lifecycle.Server {
	t.Helper()
	if err := st.CreateServer(t.Context(), s); err != nil {
		t.Fatalf("CreateServer(%s): %v", s.ID, err)
	}
	return s
}

func mustGet(t *testing.T, st store.Store, id string) *lifecycle.Server {
	t.Helper()
	s, err := st.GetServer(t.Context(), id)
	if err != nil {
		t.Fatalf("GetServer(%s): %v", id, err)
	}
	return s
}

func mustSave(t *testing.T, st store.Store, s *lifecycle.Server, events ...lifecycle.Event) {
	t.Helper()
	if err := st.SaveServer(t.Context(), s, events...); err != nil {
		t.Fatalf("SaveServer(%s v%d): %v", s.ID, s.Version, err)
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func ids(ss []*lifecycle.Server) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

func ctx(t *testing.T) context.Context { return t.Context() }
