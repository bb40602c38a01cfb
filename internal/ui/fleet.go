package ui

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// statusOrder is how the fleet lists statuses (the unexpected last).
var statusOrder = []string{"BUILD", "ACTIVE", "ERROR", "SHUTOFF", "REBOOT", "HARD_REBOOT", "REBUILD", "RESCUE", deletingRow}

// deletingRow counts the servers whose delete is under way: each shows the
// status it had (task_state deleting), which a count by phase cannot tell.
const deletingRow = "DELETING"

type statusCount struct {
	Status string
	N      int
	Phases []phaseCount
}

type phaseCount struct {
	Phase string
	N     int
}

type faultRow struct {
	ServerID, Server, Status string
	Reason, Step, Node, Msg  string
	At                       time.Time
	Attempt                  int // 0: the server's fault, N: its N-th failed attempt
}

type countRow struct {
	Name string
	N    int
}

type nodeSummary struct {
	Total, Maintenance, Held, Errors int
	States                           []countRow
	Power                            []countRow
	InMaintenance                    []apiNode
}

type fleetPage struct {
	Layout
	AllProjects  bool
	Total        int
	Statuses     []statusCount
	PastDeadline int
	HasDeadline  bool
	Faults       []faultRow
	FaultsErr    string
	IronicOK     bool
	IronicErr    string
	Nodes        *nodeSummary
	NodesErr     string
	At           time.Time
}

// allProjects asks the API whether this user may list every project's
// servers (all_tenants): a listing of zero servers, so it costs a policy
// decision. The console then shows what that listing would show.
func (rc *reqCtx) allProjects() bool {
	return rc.api.get("/v2.1/servers?all_tenants=1&limit=0", nil) == nil
}

// scope is the project the fleet's store queries cover ("" = all), after
// checking with the API that the user may list servers at all.
func (rc *reqCtx) scope() (string, bool, error) {
	if rc.allProjects() {
		return "", true, nil
	}
	if err := rc.api.get("/v2.1/servers?limit=0", nil); err != nil {
		return "", false, err
	}
	return rc.ident.ProjectID, false, nil
}

func (c *Console) fleet(rc *reqCtx) error {
	project, all, err := rc.scope()
	if err != nil {
		return err
	}
	p := &fleetPage{Layout: c.layout(rc, "Fleet", "fleet", true), AllProjects: all, At: c.cfg.Clock.Now().UTC()}
	ctx := rc.r.Context()
	counts, err := c.cfg.Store.CountServers(ctx, project)
	if err != nil {
		return err
	}
	p.Statuses, p.Total = byStatus(counts)
	if c.cfg.PastDeadline != nil {
		p.PastDeadline, p.HasDeadline = c.cfg.PastDeadline(), true
	}
	p.Faults, err = c.recentFaults(rc, project)
	if err != nil {
		p.FaultsErr = err.Error()
	}
	p.IronicOK = true
	if c.cfg.Ready != nil {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		if err := c.cfg.Ready(rctx); err != nil {
			p.IronicOK, p.IronicErr = false, err.Error()
		}
		cancel()
	}
	if p.Nodes_() {
		var body struct {
			Nodes []apiNode `json:"nodes"`
		}
		if err := rc.api.get("/ingot/v1/nodes", &body); err != nil {
			p.NodesErr = err.Error()
		} else {
			p.Nodes = summarize(body.Nodes)
		}
	}
	c.render(rc.w, rc.r, http.StatusOK, "fleet", p)
	return nil
}

// Nodes_ reports whether the nodes summary is offered to this user.
func (p *fleetPage) Nodes_() bool { return p.Layout.Nodes }

func byStatus(counts []store.StatusCount) ([]statusCount, int) {
	m := map[string]*statusCount{}
	total := 0
	for _, c := range counts {
		st := lifecycle.Nova(&lifecycle.Server{Desired: c.Desired, Phase: c.Phase}).Status
		if c.Desired == lifecycle.DesiredDeleted || c.Phase == lifecycle.PhaseDeleting {
			st = deletingRow
		}
		sc := m[st]
		if sc == nil {
			sc = &statusCount{Status: st}
			m[st] = sc
		}
		sc.N += c.N
		sc.Phases = append(sc.Phases, phaseCount{Phase: string(c.Phase), N: c.N})
		total += c.N
	}
	var out []statusCount
	for _, st := range statusOrder {
		if sc, ok := m[st]; ok {
			out = append(out, *sc)
			delete(m, st)
		} else if st == "BUILD" || st == "ACTIVE" || st == "ERROR" {
			out = append(out, statusCount{Status: st})
		}
	}
	for _, sc := range m {
		out = append(out, *sc)
	}
	for i := range out {
		sort.Slice(out[i].Phases, func(a, b int) bool { return out[i].Phases[a].Phase < out[i].Phases[b].Phase })
	}
	return out, total
}

// recentFaults takes the store's index of servers with faults and reads
// each back through the API, which decides what this user sees of it.
func (c *Console) recentFaults(rc *reqCtx, project string) ([]faultRow, error) {
	list, err := c.cfg.Store.RecentFaults(rc.r.Context(), project, 10)
	if err != nil {
		return nil, err
	}
	var out []faultRow
	for _, sv := range list {
		var body struct {
			Server apiServer `json:"server"`
		}
		if err := rc.api.get("/v2.1/servers/"+sv.ID, &body); err != nil {
			var ae *apiError
			if errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Status == http.StatusForbidden) {
				continue // deleted meanwhile, or not this user's to see
			}
			return out, err
		}
		s := body.Server
		row := faultRow{ServerID: s.ID, Server: s.Name, Status: s.Status}
		switch {
		case s.IFault != nil:
			f := s.IFault
			row.Reason, row.Step, row.Node, row.Msg, row.At = f.Reason, f.Step, f.Node, f.Message, f.At
		case len(s.Attempts) > 0:
			a := s.Attempts[len(s.Attempts)-1]
			row.Reason, row.Step, row.Node, row.Msg, row.At = a.Reason, a.Step, a.Node, a.Message, a.At
			row.Attempt = len(s.Attempts)
		case s.Fault != nil:
			row.Msg, row.At = s.Fault.Message, apiTime(s.Fault.Created)
		default:
			continue
		}
		out = append(out, row)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.After(out[j].At) })
	return out, nil
}

func summarize(nodes []apiNode) *nodeSummary {
	s := &nodeSummary{Total: len(nodes)}
	states, power := map[string]int{}, map[string]int{}
	for _, n := range nodes {
		states[n.ProvisionState]++
		power[dashIfEmpty(str(n.PowerState))]++
		if n.Maintenance {
			s.Maintenance++
			s.InMaintenance = append(s.InMaintenance, n)
		}
		if n.ServerID != nil || n.InstanceUUID != nil {
			s.Held++
		}
		if str(n.LastError) != "" {
			s.Errors++
		}
	}
	s.States, s.Power = sortedCounts(states), sortedCounts(power)
	if len(s.InMaintenance) > 10 {
		s.InMaintenance = s.InMaintenance[:10]
	}
	return s
}

func sortedCounts(m map[string]int) []countRow {
	out := make([]countRow, 0, len(m))
	for k, v := range m {
		out = append(out, countRow{Name: k, N: v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
