package dst

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/adopt"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/store"
)

// The adoption variant: another service deploys idle nodes (its own
// instance ids, instance_info as metalsmith writes it), and `ingot adopt
// --from-ironic` runs between ticks. Until adopted such a node is another
// tenant's (I7); once adopted its server is one of ours and every check
// holds for it as for a server ingot built (I1–I8, I13: the adoption
// itself sends Ironic no change, its client refusing any).

var adoptEvents = []event{
	{"foreign-deploy", 4, evForeignDeploy},
	{"adopt", 3, evAdopt},
}

var adoptWeight = sumWeights(adoptEvents)

// simCall sends one request to the simulator as another service would.
func (w *world) simCall(method, path, body string) int {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	rec := httptest.NewRecorder()
	if !serve(w.sim.Handler(), rec, req) {
		return 0
	}
	return rec.Code
}

// evForeignDeploy deploys an idle node for another service.
func evForeignDeploy(_ context.Context, w *world) (string, error) {
	if len(w.foreign) >= len(w.nodes)/2 {
		return "skipped", nil
	}
	n := w.nodes[w.rng.IntN(len(w.nodes))]
	snap, ok := w.sim.Node(n)
	if !ok || snap.InstanceUUID != "" || snap.ProvisionState != "available" || snap.Maintenance || len(snap.VIFs) != 0 || w.orphans[n] {
		return "skipped", nil
	}
	other := w.uuid()
	patch := fmt.Sprintf(`[{"op": "add", "path": "/instance_uuid", "value": %q},
		{"op": "add", "path": "/instance_info", "value": {"image_source": "http://images/other.qcow2", "root_gb": "10", "display_name": "other-%d"}}]`,
		other, len(w.foreign))
	if code := w.simCall(http.MethodPatch, "/v1/nodes/"+n, patch); code != http.StatusOK {
		return w.nname(n) + fmt.Sprintf(" refused (%d)", code), nil
	}
	w.foreign[n] = other
	if code := w.simCall(http.MethodPut, "/v1/nodes/"+n+"/states/provision", `{"target": "active"}`); code != http.StatusAccepted {
		return w.nname(n) + fmt.Sprintf(" reserved, deploy refused (%d)", code), nil
	}
	return w.nname(n), nil
}

// adoptedTotal counts the instances adopted over a sweep's seeds.
var adoptedTotal atomic.Int64

// errAdoptWrite is the adoption client's answer to any change it tries.
var errAdoptWrite = errors.New("dst: adopt sent Ironic a change")

// directTransport serves the simulator's handler in the calling goroutine.
type directTransport struct{ w *world }

func (d directTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		d.w.violate("I13: the adoption sent %s %s", req.Method, req.URL.Path)
		return nil, errAdoptWrite
	}
	rec := httptest.NewRecorder()
	if !serve(d.w.sim.Handler(), rec, req) {
		return nil, io.ErrUnexpectedEOF
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// evAdopt runs an adoption; what it adopts becomes ours.
func evAdopt(ctx context.Context, w *world) (string, error) {
	ic, err := ironic.New(ironic.Config{URL: "http://ironic.dst", HTTPClient: &http.Client{Transport: directTransport{w}},
		Timeout: time.Minute, BeforeSend: func(context.Context) error { return errAdoptWrite }})
	if err != nil {
		return "", err
	}
	if err := w.st.CreateFlavor(ctx, store.Flavor{ID: "f", Name: "f", ResourceClass: rc, DiskGB: 10, IsPublic: true}); err != nil &&
		!errors.Is(err, store.ErrExists) {
		return "", err
	}
	a := adopt.New(adopt.Deps{Store: w.st, Ironic: ic, DefaultProject: "p", Now: func() time.Time { return w.clk.Now() },
		Image: func(context.Context, string) (string, error) { return "i", nil }})
	rep, err := a.FromIronic(ctx, adopt.Options{})
	if err != nil {
		return "failed: " + err.Error(), nil
	}
	var names []string
	for _, in := range rep.Adopted {
		if w.foreign[in.Node] != in.ID {
			w.violate("I7: adopted %s on node %s, which another service did not deploy with it", in.ID, w.nname(in.Node))
		}
		delete(w.foreign, in.Node)
		w.ours[in.ID] = len(w.servers)
		w.servers = append(w.servers, in.ID)
		names = append(names, w.sname(in.ID)+"@"+w.nname(in.Node))
		adoptedTotal.Add(1)
	}
	for _, in := range rep.Already {
		if _, ours := w.ours[in.ID]; !ours {
			w.violate("adopt: %s on %s is already an ingot server, but not one the world made", in.ID, w.nname(in.Node))
		}
	}
	return fmt.Sprintf("%d adopted %v, %d already, %d refused", len(rep.Adopted), names, len(rep.Already), len(rep.Refused)), nil
}

// adoptSeeds is TestDSTAdopt's CI budget (INGOT_DST_ADOPT_SEEDS overrides it).
const adoptSeeds = 500

// TestDSTAdopt runs the adoption variant: foreign deploys and adoptions
// among the usual events. INGOT_DST_SEED replays one.
func TestDSTAdopt(t *testing.T) {
	p := defaultParams
	p.adopt = true
	if s := envInt(t, "INGOT_DST_SEED", 0); s != 0 {
		dir, tmpl := dbDir(t)
		r := runSeed(s, p, dir, tmpl)
		for _, line := range r.trace {
			t.Log(line)
		}
		if r.failed() {
			report(t, r)
		}
		return
	}
	n := envInt(t, "INGOT_DST_ADOPT_SEEDS", adoptSeeds)
	if testing.Short() {
		n = min(n, 200)
	}
	start := time.Now()
	failed, ran := sweep(t, p, envInt(t, "INGOT_DST_BASE", 1), n, 5)
	for _, r := range failed {
		t.Errorf("seed %d failed; replay: INGOT_DST_SEED=%d go test ./test/dst -run 'TestDSTAdopt$' -v\n  %s\nlast trace lines:\n    %s",
			r.seed, r.seed, strings.Join(r.errs, "\n  "), strings.Join(r.trace, "\n    "))
	}
	t.Logf("%d seeds in %s: %d instances adopted, then checked as ours", ran, time.Since(start).Round(time.Millisecond),
		adoptedTotal.Load())
	if adoptedTotal.Load() == 0 {
		t.Errorf("no seed adopted anything: the variant tests nothing")
	}
}
