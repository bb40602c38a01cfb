package dst

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/neutronports"
	"github.com/ingot-dev/ingot/internal/neutronsim"
	"github.com/ingot-dev/ingot/internal/reconciler"
)

// One seed in three keeps its servers' ports in Neutron (the simulator,
// held to the real neutron-server by internal/neutron's contract test)
// instead of the embedded IPAM; the crash points, deletes mid-step and
// node faults then meet Neutron's create and delete too.
func usesNeutron(seed int64) bool { return seed%3 == 0 }

// neutronSide is a seed's Neutron: one shared flat network with a small
// subnet.
type neutronSide struct {
	sim   *neutronsim.Sim
	netID string
}

func newNeutronSide(w *world) (*neutronSide, error) {
	sim := neutronsim.New(neutronsim.Options{Now: w.clk.Now, Identify: func(tok string) (neutronsim.Identity, bool) {
		return neutronsim.Identity{ProjectID: "service", Admin: true}, tok == "tok-ingot"
	}})
	netID := sim.AddNetwork(neutronsim.NetworkSpec{Name: "tenant", Shared: true, Physnet: "physnet1"})
	if _, err := sim.AddSubnet(neutronsim.SubnetSpec{NetworkID: netID, CIDR: "10.0.0.0/27", DNS: []string{"10.0.0.53"}}); err != nil {
		return nil, fmt.Errorf("neutron subnet: %w", err)
	}
	return &neutronSide{sim: sim, netID: netID}, nil
}

// neutronTransport serves the simulator in the calling goroutine; nothing
// goes out once the replica is killed.
type neutronTransport struct {
	sim *neutronsim.Sim
	r   *replica
}

func (nt neutronTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if nt.r.dead || req.Context().Err() != nil {
		return nil, errKilled
	}
	rec := httptest.NewRecorder()
	nt.sim.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// ports is a replica's Neutron backend (nil without Neutron: the IPAM).
func (w *world) ports(r *replica) reconciler.Ports {
	if w.neutron == nil {
		return nil
	}
	pc := &gophercloud.ProviderClient{HTTPClient: http.Client{Transport: neutronTransport{sim: w.neutron.sim, r: r}}}
	pc.SetToken("tok-ingot")
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: "http://neutron.dst/",
		ResourceBase: "http://neutron.dst/v2.0/", Type: "network"}
	return neutronports.New(r.cst, neutron.New(sc, time.Minute),
		neutronports.Options{Step: func(p string) { w.step(r, p) }, Now: r.clk.Now})
}

// networkID is what a new server asks for.
func (w *world) networkID() string {
	if w.neutron != nil {
		return w.neutron.netID
	}
	return w.nets[0].ID
}

// checkNeutron: at quiescence Neutron holds exactly the ports of the live
// servers' rows, by Neutron id — none of a deleted, failed or rescheduled
// build is left (I3 for Neutron).
func (w *world) checkNeutron(live map[string]bool) {
	if w.neutron == nil {
		return
	}
	ctx := context.Background()
	want := 0
	for _, id := range w.servers {
		n := w.neutron.sim.PortCount(id)
		if !live[id] {
			if n != 0 {
				w.violate("I3: %s left %d Neutron port(s)", w.sname(id), n)
			}
			continue
		}
		rows, err := w.st.Ports(ctx, id)
		if err != nil {
			w.violate("ports of %s: %v", w.sname(id), err)
			continue
		}
		want += len(rows)
		if n != len(rows) {
			w.violate("live %s has %d Neutron port(s), %d row(s)", w.sname(id), n, len(rows))
		}
		for _, p := range rows {
			if p.NeutronID == "" {
				w.violate("live %s: row %s never recorded its Neutron port", w.sname(id), p.ID)
			}
		}
	}
	if all := w.neutron.sim.PortCount(""); all != want {
		w.violate("I3: Neutron holds %d ports, the live servers %d", all, want)
	}
}

func (c *crashStore) RecordNeutronPort(ctx context.Context, portID, neutronID, ip, mac string) error {
	if c.dead {
		return errKilled
	}
	return c.Store.RecordNeutronPort(ctx, portID, neutronID, ip, mac)
}
