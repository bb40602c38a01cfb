package realcinder

import (
	"net"
	"net/http"
	"path/filepath"
	"time"

	"testing"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/config"
)

// cinderAway: with Cinder unreachable, what needs it answers 503 (the
// client may retry; nothing recorded), not 500: a create with a volume, an
// attach, Nova's volume proxy.
func cinderAway(t *testing.T, w *world) {
	s := w.ingot(t, "cinder-away")
	vol := s.volume("away", false)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there any more
	away := w.ingotOn(t, "cinder-away", filepath.Join(t.TempDir(), "ingot.db"), app.Options{}, func(c *config.Config) {
		c.Volume.Cinder.URL = dead
		c.Volume.Cinder.Timeout = 2 * time.Second
	})
	body := map[string]any{"server": map[string]any{"name": "needs-cinder", "flavorRef": "bm",
		"imageRef": away.app.Config.Images[0].ID, "networks": []map[string]string{{"uuid": away.app.Config.Networks[0].ID}},
		"block_device_mapping_v2": []map[string]any{{"source_type": "volume", "destination_type": "volume", "uuid": vol}}}}
	if st := away.Call(http.MethodPost, "/v2.1/servers", body, nil); st != http.StatusServiceUnavailable {
		t.Errorf("create with a volume while Cinder is away: %d, want 503", st)
	}
	var list struct {
		Servers []any `json:"servers"`
	}
	away.Call(http.MethodGet, "/v2.1/servers", nil, &list)
	if len(list.Servers) != 0 {
		t.Errorf("a refused create left %d servers", len(list.Servers))
	}
	away.Microversion = "2.35"
	if st := away.Call(http.MethodGet, "/v2.1/os-volumes", nil, nil); st != http.StatusServiceUnavailable {
		t.Errorf("Nova's volume proxy while Cinder is away: %d, want 503", st)
	}
	if st := away.Call(http.MethodGet, "/v2.1/os-volumes/"+vol, nil, nil); st != http.StatusServiceUnavailable {
		t.Errorf("one volume while Cinder is away: %d, want 503", st)
	}
}
