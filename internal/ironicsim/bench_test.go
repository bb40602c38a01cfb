package ironicsim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
)

const benchFields = "uuid,provision_state,target_provision_state,instance_uuid,last_error,maintenance,power_state,reservation"

// walkList fetches every page of the node list, following the next links,
// and returns the number of nodes seen.
func walkList(tb testing.TB, client *http.Client, url string) int {
	seen := 0
	for url != "" {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
		res, err := client.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var page struct {
			Nodes []struct {
				UUID           string `json:"uuid"`
				ProvisionState string `json:"provision_state"`
			} `json:"nodes"`
			Next string `json:"next"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			tb.Fatal(err)
		}
		seen += len(page.Nodes)
		url = page.Next
	}
	return seen
}

// BenchmarkListNodes10k walks 10 pages of 1000 nodes with fields over HTTP
// (one op = the whole walk, 11 requests: the last page is empty).
func BenchmarkListNodes10k(b *testing.B) {
	sim := New(Options{Clock: clock.NewManual(t0), Seed: 1})
	sim.AddNodes(10000, NodeSpec{ResourceClass: "baremetal", Ports: 1})
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	client := srv.Client()
	url := srv.URL + "/v1/nodes?fields=" + benchFields + "&limit=1000"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n := walkList(b, client, url); n != 10000 {
			b.Fatalf("saw %d nodes", n)
		}
	}
}

// TestListNodes10kUnder100ms guards the scale target with a 10× margin for
// loaded CI machines (the benchmark reports the real figure: about 80 ms,
// client decoding included, on an idle 2-core machine).
func TestListNodes10kUnder100ms(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing is meaningless under -short or -race")
	}
	sim := New(Options{Clock: clock.NewManual(t0), Seed: 1})
	sim.AddNodes(10000, NodeSpec{ResourceClass: "baremetal"})
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	url := srv.URL + "/v1/nodes?fields=" + benchFields + "&limit=1000"
	walkList(t, srv.Client(), url) // warm up
	best := time.Hour
	for i := 0; i < 5; i++ {
		start := time.Now()
		walkList(t, srv.Client(), url)
		if d := time.Since(start); d < best {
			best = d
		}
	}
	t.Logf("10 pages of 1000 nodes with fields: best of 5 %v", best)
	if best > time.Second {
		t.Errorf("listing 10k nodes took %v (target 100 ms)", best)
	}
}
