package realcinder

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// proxyVolume is Nova's os-volumes view, the members this test reads.
type proxyVolume struct {
	ID          string            `json:"id"`
	DisplayName string            `json:"displayName"`
	VolumeType  *string           `json:"volumeType"`
	Metadata    map[string]string `json:"metadata"`
}

// proxySnapshot is Nova's os-snapshots view.
type proxySnapshot struct {
	ID                 string  `json:"id"`
	VolumeID           string  `json:"volumeId"`
	Status             string  `json:"status"`
	Size               int     `json:"size"`
	CreatedAt          *string `json:"createdAt"`
	DisplayName        string  `json:"displayName"`
	DisplayDescription string  `json:"displayDescription"`
}

// cinderNovaProxies: Nova's os-volumes and os-snapshots proxies (≤2.35)
// over Cinder as Nova serves them: a volume's metadata as created,
// common.limited's offset and limit on every list (with its 400s), and
// snapshots (create, show, list, delete) that only their project sees.
func cinderNovaProxies(t *testing.T, w *world) {
	s := w.ingot(t, "rc-x1")
	s.Microversion = "2.35"
	other := *s.Client
	other.Token = w.cin.Keystone.Token(t, "member-b")

	var vols []string
	for _, name := range []string{"px-1", "px-2", "px-3"} {
		var made struct{ Volume proxyVolume }
		body := map[string]any{"volume": map[string]any{"size": 1, "display_name": name, "metadata": map[string]string{"Type": "work"}}}
		if code := s.Call("POST", "/v2.1/os-volumes", body, &made); code != http.StatusOK {
			t.Fatalf("POST os-volumes: %d", code)
		}
		if made.Volume.Metadata["Type"] != "work" {
			t.Errorf("created volume's metadata %v, want Type=work", made.Volume.Metadata)
		}
		vols = append(vols, made.Volume.ID)
	}
	t.Cleanup(func() {
		for _, v := range vols {
			s.Call("DELETE", "/v2.1/os-volumes/"+v, nil, nil)
		}
	})
	for _, v := range vols {
		s.WaitFor("volume "+v+" available", time.Minute, func() bool { return s.volumeStatus(v) == "available" })
	}
	var shown struct{ Volume proxyVolume }
	s.Call("GET", "/v2.1/os-volumes/"+vols[0], nil, &shown)
	if shown.Volume.Metadata["Type"] != "work" || shown.Volume.VolumeType == nil || *shown.Volume.VolumeType == "" {
		t.Errorf("shown volume: metadata %v, volumeType %v; want Type=work and Cinder's type", shown.Volume.Metadata, shown.Volume.VolumeType)
	}

	t.Run("limit and offset", func(t *testing.T) {
		for _, path := range []string{"/v2.1/os-volumes", "/v2.1/os-volumes/detail"} {
			all := s.volumeIDs(path)
			if len(all) < 3 {
				t.Fatalf("%s: %d volumes, want at least 3", path, len(all))
			}
			cases := []struct {
				query string
				want  []string
			}{
				{"?limit=2", all[:2]},
				{"?offset=1&limit=1", all[1:2]},
				{"?offset=1", all[1:]},
				{"?limit=0", all},
				{"?offset=1000", []string{}},
			}
			for _, c := range cases {
				if got := s.volumeIDs(path + c.query); !slices.Equal(got, c.want) {
					t.Errorf("%s%s: %v, want %v", path, c.query, got, c.want)
				}
			}
			for _, q := range []string{"?limit=-1", "?offset=x", "?limit=1&limit=two"} {
				if code := s.Call("GET", path+q, nil, nil); code != http.StatusBadRequest {
					t.Errorf("%s%s: %d, want 400", path, q, code)
				}
			}
		}
	})

	t.Run("snapshots", func(t *testing.T) {
		var made struct{ Snapshot proxySnapshot }
		body := map[string]any{"snapshot": map[string]any{"volume_id": vols[0], "display_name": "snap-1",
			"display_description": "of px-1", "force": false}}
		if code := s.Call("POST", "/v2.1/os-snapshots", body, &made); code != http.StatusOK {
			t.Fatalf("POST os-snapshots: %d", code)
		}
		snap := made.Snapshot
		if snap.VolumeID != vols[0] || snap.DisplayName != "snap-1" || snap.DisplayDescription != "of px-1" ||
			snap.Size != 1 || snap.CreatedAt == nil || snap.ID == "" {
			t.Fatalf("created snapshot %+v", snap)
		}
		deleted := false
		t.Cleanup(func() {
			if !deleted {
				s.Call("DELETE", "/v2.1/os-snapshots/"+snap.ID, nil, nil)
			}
		})
		s.WaitFor("snapshot available", time.Minute, func() bool {
			var got struct{ Snapshot proxySnapshot }
			s.Call("GET", "/v2.1/os-snapshots/"+snap.ID, nil, &got)
			if got.Snapshot.Status == "error" {
				t.Fatalf("snapshot went to error")
			}
			return got.Snapshot.Status == "available" && got.Snapshot.DisplayName == "snap-1"
		})
		for _, path := range []string{"/v2.1/os-snapshots", "/v2.1/os-snapshots/detail"} {
			var list struct{ Snapshots []proxySnapshot }
			if code := s.Call("GET", path, nil, &list); code != http.StatusOK ||
				!slices.ContainsFunc(list.Snapshots, func(x proxySnapshot) bool { return x.ID == snap.ID }) {
				t.Errorf("%s: %d %+v, want it to list %s", path, code, list.Snapshots, snap.ID)
			}
			if code := s.Call("GET", path+"?offset=1", nil, &list); code != http.StatusOK || len(list.Snapshots) != 0 {
				t.Errorf("%s?offset=1 with one snapshot: %d %+v, want none", path, code, list.Snapshots)
			}
			if code := s.Call("GET", path+"?limit=-2", nil, nil); code != http.StatusBadRequest {
				t.Errorf("%s?limit=-2: %d, want 400", path, code)
			}
			var theirs struct{ Snapshots []proxySnapshot }
			other.Call("GET", path, nil, &theirs)
			if slices.ContainsFunc(theirs.Snapshots, func(x proxySnapshot) bool { return x.ID == snap.ID }) {
				t.Errorf("another project's %s lists %s", path, snap.ID)
			}
		}
		if code := other.Call("GET", "/v2.1/os-snapshots/"+snap.ID, nil, nil); code != http.StatusNotFound {
			t.Errorf("another project's show: %d, want 404", code)
		}
		if code := other.Call("DELETE", "/v2.1/os-snapshots/"+snap.ID, nil, nil); code != http.StatusNotFound {
			t.Errorf("another project's delete: %d, want 404", code)
		}
		refused := []struct {
			what string
			body map[string]any
			want int
		}{
			{"an unknown volume", map[string]any{"snapshot": map[string]any{"volume_id": "00000000-0000-0000-0000-000000000000"}}, http.StatusNotFound},
			{"another project's volume", map[string]any{"snapshot": map[string]any{"volume_id": vols[1]}}, http.StatusNotFound},
			{"no volume_id", map[string]any{"snapshot": map[string]any{"display_name": "x"}}, http.StatusBadRequest},
			{"an unknown member", map[string]any{"snapshot": map[string]any{"volume_id": vols[1], "size": 1}}, http.StatusBadRequest},
			{"force not a boolean", map[string]any{"snapshot": map[string]any{"volume_id": vols[1], "force": "maybe"}}, http.StatusBadRequest},
		}
		for _, c := range refused {
			cl := s.Client
			if c.what == "another project's volume" {
				cl = &other
			}
			if code := cl.Call("POST", "/v2.1/os-snapshots", c.body, nil); code != c.want {
				t.Errorf("snapshot of %s: %d, want %d", c.what, code, c.want)
			}
		}
		var fromSnap struct {
			ItemNotFound struct{ Message string } `json:"itemNotFound"`
		}
		body = map[string]any{"volume": map[string]any{"size": 1, "snapshot_id": "00000000-0000-0000-0000-000000000000"}}
		if code := s.Call("POST", "/v2.1/os-volumes", body, &fromSnap); code != http.StatusNotFound {
			t.Errorf("a volume from an unknown snapshot: %d %q, want 404", code, fromSnap.ItemNotFound.Message)
		}
		s.Microversion = "2.36"
		if code := s.Call("GET", "/v2.1/os-snapshots", nil, nil); code != http.StatusNotFound {
			t.Errorf("os-snapshots at 2.36: %d, want 404", code)
		}
		s.Microversion = "2.35"
		if code := s.Call("DELETE", "/v2.1/os-snapshots/"+snap.ID, nil, nil); code != http.StatusAccepted {
			t.Fatalf("DELETE os-snapshots: %d, want 202", code)
		}
		deleted = true
		s.WaitFor("snapshot deleted", time.Minute, func() bool {
			return s.Call("GET", "/v2.1/os-snapshots/"+snap.ID, nil, nil) == http.StatusNotFound
		})
	})
}

// volumeIDs lists path (os-volumes or its detail) and returns the ids in
// order.
func (s *stack) volumeIDs(path string) []string {
	s.t.Helper()
	var list struct{ Volumes []proxyVolume }
	if code := s.Call("GET", path, nil, &list); code != http.StatusOK {
		s.t.Fatalf("GET %s: %d", path, code)
	}
	ids := []string{}
	for _, v := range list.Volumes {
		ids = append(ids, v.ID)
	}
	return ids
}
