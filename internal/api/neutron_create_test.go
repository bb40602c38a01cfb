package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/neutronsim"
)

// neutronFixture is the API with network.backend neutron over the Neutron
// simulator (ingot's service token is the simulator's admin); the caller
// is noauth's project "ingot".
type neutronFixture struct {
	*fixture
	sim *neutronsim.Sim
}

func newNeutronFixture(t *testing.T) *neutronFixture {
	t.Helper()
	sim := neutronsim.New(neutronsim.Options{Identify: func(tok string) (neutronsim.Identity, bool) {
		return neutronsim.Identity{ProjectID: "service", Admin: true}, tok == "tok-ingot"
	}})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	pc := &gophercloud.ProviderClient{}
	pc.SetToken("tok-ingot")
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: srv.URL + "/", ResourceBase: srv.URL + "/v2.0/", Type: "network"}
	nc := neutron.New(sc, time.Minute)
	f := newFixtureWith(t, func(c *api.Config) { c.Networks, c.Neutron = nil, nc })
	return &neutronFixture{fixture: f, sim: sim}
}

func (f *neutronFixture) network(project string, shared bool) string {
	id := f.sim.AddNetwork(neutronsim.NetworkSpec{Name: "n-" + project, ProjectID: project, Shared: shared, Physnet: "physnet1"})
	if _, err := f.sim.AddSubnet(neutronsim.SubnetSpec{NetworkID: id, CIDR: "192.0.2.0/24"}); err != nil {
		f.t.Fatal(err)
	}
	return id
}

// port makes a port of project on the network (device set: in use).
func (f *neutronFixture) port(netID, project, device, ip string) string {
	f.t.Helper()
	body := map[string]any{"network_id": netID, "project_id": project, "device_id": device}
	if ip != "" {
		body["fixed_ips"] = []map[string]string{{"ip_address": ip}}
	}
	raw, _ := json.Marshal(map[string]any{"port": body})
	req := httptest.NewRequest(http.MethodPost, "/v2.0/ports", strings.NewReader(string(raw)))
	req.Header.Set("X-Auth-Token", "tok-ingot")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	f.sim.ServeHTTP(rec, req)
	var out struct{ Port struct{ ID string } }
	if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
		f.t.Fatalf("port: %d %s", rec.Code, rec.Body)
	}
	return out.Port.ID
}

func (f *neutronFixture) createWith(networks any, extra map[string]any) response {
	body := validCreate()
	s := body["server"].(map[string]any)
	s["networks"] = networks
	for k, v := range extra {
		s[k] = v
	}
	return f.do("POST", "/v2.1/servers", "2.90", body)
}

// TestCreateOnNeutron: a create's networks are checked in Neutron with
// Nova's answers, and the spec records the fixed IPs and the user's ports.
func TestCreateOnNeutron(t *testing.T) {
	f := newNeutronFixture(t)
	shared := f.network("admin", true)
	own := f.network("ingot", false)
	others := f.network("project-b", false)

	r := f.createWith([]any{map[string]any{"uuid": others}}, nil).want(t, http.StatusBadRequest)
	if !strings.Contains(string(r.raw), "could not be found") {
		t.Errorf("another project's network: %s", r.raw)
	}
	f.createWith("auto", nil).want(t, http.StatusConflict) // two usable networks

	id := obj(t, f.createWith([]any{map[string]any{"uuid": own, "fixed_ip": "192.0.2.9"}}, nil).want(t, http.StatusAccepted).body, "server")["id"].(string)
	if s := f.server(id); len(s.Spec.Networks) != 1 || s.Spec.Networks[0] != own || s.Spec.FixedIPs[own] != "192.0.2.9" {
		t.Errorf("spec %+v: want network %s with fixed IP 192.0.2.9", s.Spec, own)
	}

	f.port(shared, "project-b", "", "192.0.2.50")
	if r := f.createWith([]any{map[string]any{"uuid": shared, "fixed_ip": "192.0.2.50"}}, nil).want(t, http.StatusBadRequest); !strings.Contains(string(r.raw), "already in use") {
		t.Errorf("fixed IP in use: %s", r.raw)
	}
	f.createWith([]any{map[string]any{"uuid": shared, "fixed_ip": "192.0.2.51"}}, map[string]any{"max_count": 2}).want(t, http.StatusBadRequest)

	mine := f.port(shared, "ingot", "", "")
	busy := f.port(shared, "ingot", "some-server", "")
	theirs := f.port(shared, "project-b", "", "")
	f.createWith([]any{map[string]any{"port": theirs}}, nil).want(t, http.StatusBadRequest)
	f.createWith([]any{map[string]any{"port": busy}}, nil).want(t, http.StatusConflict)
	f.createWith([]any{map[string]any{"port": mine}}, map[string]any{"max_count": 2}).want(t, http.StatusBadRequest)
	f.createWith([]any{map[string]any{"port": mine, "fixed_ip": "192.0.2.60"}}, nil).want(t, http.StatusBadRequest)
	id = obj(t, f.createWith([]any{map[string]any{"port": mine}}, nil).want(t, http.StatusAccepted).body, "server")["id"].(string)
	if s := f.server(id); len(s.Spec.Networks) != 1 || s.Spec.Networks[0] != shared || s.Spec.UserPorts[shared] != mine {
		t.Errorf("spec %+v: want the port %s on %s", s.Spec, mine, shared)
	}
}

// TestCreateOnNeutronAuto: "auto" takes the one network the project may
// use, and none when there is none.
func TestCreateOnNeutronAuto(t *testing.T) {
	f := newNeutronFixture(t)
	id := obj(t, f.createWith("auto", nil).want(t, http.StatusAccepted).body, "server")["id"].(string)
	if s := f.server(id); len(s.Spec.Networks) != 0 {
		t.Errorf("auto with no network: %v", s.Spec.Networks)
	}
	f.network("project-b", false) // not usable by "ingot"
	shared := f.network("admin", true)
	id = obj(t, f.createWith("auto", nil).want(t, http.StatusAccepted).body, "server")["id"].(string)
	if s := f.server(id); len(s.Spec.Networks) != 1 || s.Spec.Networks[0] != shared {
		t.Errorf("auto: %v, want the shared network %s", s.Spec.Networks, shared)
	}
}
