package realcinder

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/faulttest"
	"github.com/ingot-dev/ingot/internal/history"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// cinderTimeout is ingot's bound on one Cinder call in the link faults;
// the blackhole outlasts it.
const cinderTimeout = 2 * time.Second

// cinderLinkFaults: ingot's link to the real Cinder (found in Keystone's
// catalog, the proxied endpoint registered in a region only this ingot
// asks for) slowed 300 ± 100 ms a chunk, reset, then blackholed for longer
// than volume.cinder.timeout, each time during a burst of creates with a
// data volume, a delete of a server with its volume, and a volume attach
// to a running server; then healed. Every server converges (ACTIVE, or
// gone once deleted), no request is answered 500, and the history check
// finds nothing lost, resurrected, double-held, leaked, past its deadline
// or not linearizable — the leaks counted against Cinder and Ironic: no
// attachment of a server that is gone, no volume left reserved, attaching
// or detaching, no volume target on a node that holds no server.
func cinderLinkFaults(t *testing.T, w *world) {
	u, err := url.Parse(w.cin.URL)
	if err != nil {
		t.Fatal(err)
	}
	link := faulttest.New(t, "cinder", u.Host)
	w.cin.Keystone.RegisterServiceIn(t, "volumev3", "cinderv3-faulty", link.Rewrite(w.cin.URL), "RegionFault")
	rec := history.New()
	rc := "rc-lf"
	s := w.ingotOn(t, rc, filepath.Join(t.TempDir(), "ingot.db"), app.Options{}, func(c *config.Config) {
		c.Auth.Keystone.Region = "RegionFault"
		c.Volume.Cinder.URL = "catalog"
		c.Volume.Cinder.Timeout = cinderTimeout
	})
	s.HTTP = rec.Client(30 * time.Second)
	var nodes []string
	for i := range 4 {
		nodes = append(nodes, w.ir.EnrollNode(t, ironictest.NodeSpec{Name: fmt.Sprintf("lf%d", i), ResourceClass: rc, Kind: ironictest.Fast}))
	}
	create := func(name, vol string) (string, int) {
		var out struct {
			Server struct{ ID string } `json:"server"`
		}
		code := s.Call("POST", "/v2.1/servers", map[string]any{"server": map[string]any{"name": name, "flavorRef": "bm",
			"imageRef": s.app.Config.Images[0].ID, "networks": []map[string]string{{"uuid": s.app.Config.Networks[0].ID}},
			"block_device_mapping_v2": []map[string]any{{"source_type": "volume", "destination_type": "volume", "uuid": vol}}}}, &out)
		return out.Server.ID, code
	}
	status := func(id string) string {
		srv, code := s.Get(id)
		switch {
		case code == http.StatusNotFound:
			return "gone"
		case code != http.StatusOK:
			return fmt.Sprint(code)
		case srv.TaskState != nil && *srv.TaskState != "":
			return srv.Status + "/" + *srv.TaskState
		}
		return srv.Status
	}
	stable := func(ids []string) map[string]string {
		out := map[string]string{}
		poll.Until(t, 3*time.Minute, "servers stable", func() (bool, string) {
			for _, id := range ids {
				out[id] = status(id)
			}
			for _, st := range out {
				if st != "ACTIVE" && st != "ERROR" && st != "gone" {
					return false, fmt.Sprint(out)
				}
			}
			return true, ""
		})
		return out
	}
	var vols []string
	began := time.Now()
	for _, p := range faulttest.Standard(cinderTimeout) {
		var answers []string
		start := time.Now()
		pv := make([]string, 5)
		for i := range pv {
			pv[i] = s.volume(fmt.Sprintf("%s-%d", p.Name, i), false)
		}
		vols = append(vols, pv...)
		var before []string
		for i, n := range []string{"-a", "-b"} {
			id, code := create(p.Name+n, pv[i])
			if code != http.StatusAccepted {
				t.Fatalf("create before the fault: %d", code)
			}
			before = append(before, id)
		}
		for _, id := range before {
			s.WaitStatus(id, "ACTIVE", 2*time.Minute)
		}
		p.Apply(link)
		cut := time.Now()
		ids := append([]string(nil), before...)
		for i := range 2 {
			id, code := create(fmt.Sprintf("%s-during-%d", p.Name, i), pv[2+i])
			answers = append(answers, fmt.Sprintf("create %d", code))
			if code >= 500 && code != http.StatusServiceUnavailable {
				t.Errorf("%s: a create answered %d", p.Name, code)
			}
			if id != "" {
				ids = append(ids, id)
			}
		}
		code := s.Call("DELETE", "/v2.1/servers/"+before[0], nil, nil)
		answers = append(answers, fmt.Sprintf("delete %d", code))
		if code != http.StatusNoContent {
			t.Errorf("%s: the delete answered %d", p.Name, code)
		}
		code = s.attach(before[1], pv[4])
		answers = append(answers, fmt.Sprintf("attach %d", code))
		if code >= 500 && code != http.StatusServiceUnavailable {
			t.Errorf("%s: the volume attach answered %d", p.Name, code)
		}
		if d := p.Hold - time.Since(cut); d > 0 {
			time.Sleep(d) // the fault lasts as long as the scenario says, whatever the requests took
		}
		link.Heal()
		healed := time.Now()
		end := stable(ids)
		converged := time.Since(healed)
		if end[before[0]] != "gone" {
			t.Errorf("%s: the server deleted during the fault is %s", p.Name, end[before[0]])
		}
		for _, id := range ids[1:] {
			if end[id] != "ACTIVE" {
				t.Errorf("%s: %s is %s after the heal, want ACTIVE", p.Name, id, end[id])
			}
		}
		s.waitOpDone(before[1])
		// The phase's servers are deleted through the healed link, freeing
		// the nodes for the next phase.
		for _, id := range ids[1:] {
			if code := s.Call("DELETE", "/v2.1/servers/"+id, nil, nil); code != http.StatusNoContent {
				t.Errorf("%s: delete after the heal: %d", p.Name, code)
			}
		}
		stable(ids)
		t.Logf("cinder %s for %s (volume.cinder.timeout %s): %s; converged %s after the heal (phase %s)", p.Name,
			healed.Sub(cut).Round(100*time.Millisecond), cinderTimeout, strings.Join(answers, ", "),
			converged.Round(100*time.Millisecond), time.Since(start).Round(time.Second))
	}
	stuck := 0
	for _, v := range vols {
		if st := s.volumeStatus(v); st != "available" {
			stuck++
			t.Errorf("volume %s is %s at the end, want available", v, st)
		}
	}
	servers, err := history.Servers(s.HTTP, s.URL, s.tok)
	if err != nil {
		t.Fatal(err)
	}
	fin := history.Final{At: time.Now(), Servers: servers, Nodes: w.ir.HistoryNodes(t, nodes...), Holdings: s.holdings(nodes, vols)}
	v := rec.Require(t, fin, history.Bounds{Build: s.app.Config.BuildTimeout + 10*time.Second, Delete: s.app.Config.DeleteTimeout + 10*time.Second})
	t.Logf("Cinder link faults, %d volumes in %s: %d not available at the end; %s", len(vols), time.Since(began).Round(time.Second), stuck, v)
}

// holdings are Cinder's attachments of vols (by the server they are for)
// and the Ironic volume targets of nodes.
func (s *stack) holdings(nodes, vols []string) []history.Holding {
	s.t.Helper()
	var as struct {
		Attachments []struct {
			ID       string `json:"id"`
			Instance string `json:"instance"`
			Volume   string `json:"volume_id"`
		} `json:"attachments"`
	}
	if st := s.w.cin.Do(s.t, s.w.cin.Keystone.Token(s.t, "admin"), http.MethodGet, "/attachments?all_tenants=1", nil, &as); st != http.StatusOK {
		s.t.Fatalf("attachments: %d", st)
	}
	var hs []history.Holding
	for _, a := range as.Attachments {
		if !slices.Contains(vols, a.Volume) {
			continue
		}
		hs = append(hs, history.Holding{Kind: "attachment", ID: a.ID, Server: a.Instance})
	}
	for _, n := range nodes {
		for _, tg := range s.w.ir.ListVolumeTargets(s.t, n) {
			hs = append(hs, history.Holding{Kind: "target", ID: fmt.Sprint(tg["uuid"]), Node: n})
		}
	}
	return hs
}
