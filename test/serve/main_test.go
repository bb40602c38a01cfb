package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
)

func TestMain(m *testing.M) { os.Exit(ingottest.Main(m)) }

// launch starts `ingot args...`, built as a user builds it, without
// waiting; it is killed when the test ends.
func launch(t testing.TB, args ...string) *ingottest.Proc {
	t.Helper()
	return ingottest.Start(t, ingottest.Binary(t), ingottest.Options{}, args...)
}

var hc = &http.Client{Timeout: 10 * time.Second}

// getJSON GETs url (Ironic's microversion 1.78 header set) into out.
func getJSON(t testing.TB, url string, out any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
