package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/api/core"
)

// TestEmbeddedVolumeTargets: the embedded registry's targets come from
// volume.embedded (portal, IQN prefix); in records-only mode a volume is
// a record and a server asking for one is refused with 400, nothing held.
func TestEmbeddedVolumeTargets(t *testing.T) {
	f := newFixtureWith(t, func(c *api.Config) {
		c.Embedded = core.EmbeddedVolumes{Portal: "192.0.2.10:3260", IQNPrefix: "iqn.2026-01.com.example"}
	})
	v := f.volume(f.newVolume("served"))
	if v.TargetPortal != "192.0.2.10:3260" || v.TargetIQN != "iqn.2026-01.com.example:volume-"+v.ID {
		t.Errorf("target %s at %s, want the configured ones", v.TargetIQN, v.TargetPortal)
	}

	f = newFixtureWith(t, func(c *api.Config) { c.Embedded = core.EmbeddedVolumes{RecordsOnly: true} })
	id := f.newVolume("record")
	msg := f.do("POST", "/v2.1/servers", "2.90", createBody(true, bdm(id, nil, false))).novaError(t, http.StatusBadRequest, "badRequest")
	if !strings.Contains(msg, "records only") {
		t.Errorf("records-only create: %q", msg)
	}
	if v := f.volume(id); v.ServerID != "" || v.Status != "available" {
		t.Errorf("refused create held the volume: %+v", v)
	}
}
