package lifecycle

import "testing"

func TestNovaBuildTaskStates(t *testing.T) {
	for _, tc := range []struct {
		phase Phase
		task  string
	}{
		{PhasePending, "scheduling"},
		{PhaseReserving, "scheduling"},
		{PhaseNetworking, "networking"},
		{PhaseVolumes, "block_device_mapping"},
		{PhaseDeploying, "spawning"},
		{PhaseReleasing, "spawning"},
	} {
		got := Nova(&Server{Desired: DesiredActive, Phase: tc.phase})
		want := NovaState{Status: "BUILD", VMState: "building", TaskState: tc.task, Visible: true}
		if got != want {
			t.Errorf("Nova(%s) = %+v, want %+v", tc.phase, got, want)
		}
	}
	// A delete wins over the volumes phase too (I2).
	got := Nova(&Server{Desired: DesiredDeleted, Phase: PhaseVolumes})
	if got.Status != "DELETED" || got.TaskState != "deleting" || !got.Visible {
		t.Errorf("Nova(volumes, delete requested) = %+v", got)
	}
}
