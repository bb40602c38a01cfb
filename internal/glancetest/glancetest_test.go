package glancetest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/testproc"

	"github.com/ingot-dev/ingot/internal/keystonetest"
)

// TestStart: a member's private image is active with its properties, and
// another project's member does not see it.
func TestStart(t *testing.T) {
	ks := keystonetest.Start(t)
	e := Start(t, ks)
	rss, procs := e.Proc.RSS()
	t.Logf("glance-api: db_sync %s, start %s, RSS %d MiB over %d processes",
		e.SyncTime.Round(1e6), e.Proc.StartTime.Round(1e6), rss>>20, procs)
	id := e.UploadImage(t, "member-a", ImageOptions{Name: "img", MinDisk: 3,
		Properties: map[string]string{"trait:CUSTOM_GOLD": "required"}})
	var img map[string]any
	if err := testproc.Call(e.hc, ks.Token(t, "member-a"), http.MethodGet, e.URL+"/v2/images/"+id, nil, &img); err != nil {
		t.Fatal(err)
	}
	if img["status"] != "active" || img["min_disk"] != float64(3) || img["trait:CUSTOM_GOLD"] != "required" {
		t.Errorf("image: %v", img)
	}
	err := testproc.Call(e.hc, ks.Token(t, "member-b"), http.MethodGet, e.URL+"/v2/images/"+id, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("another project's member: %v, want 404", err)
	}
}
