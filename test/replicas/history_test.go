package replicas

import (
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/history"
)

// historyNodes is the simulator's nodes, for the history.
func (c *cluster) historyNodes() []history.Node {
	c.t.Helper()
	nodes, err := history.SimNodes(hc, c.sim)
	if err != nil {
		c.t.Fatal(err)
	}
	return nodes
}

// ports is every port row of the database: each must belong to a live
// server, its VIF on the node that server holds.
func (c *cluster) ports() []history.Holding {
	c.t.Helper()
	conn, err := pgx.Connect(c.t.Context(), c.dsn)
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close(c.t.Context())
	rs, err := conn.Query(c.t.Context(), `SELECT id, server_id, vif_node FROM ports`)
	if err != nil {
		c.t.Fatal(err)
	}
	defer rs.Close()
	var out []history.Holding
	for rs.Next() {
		h := history.Holding{Kind: "port"}
		if err := rs.Scan(&h.ID, &h.Server, &h.Node); err != nil {
			c.t.Fatal(err)
		}
		out = append(out, h)
	}
	if err := rs.Err(); err != nil {
		c.t.Fatal(err)
	}
	return out
}

// checkHistory checks what the test's clients were told against the final
// state, read through r once the run is quiet, and returns the verdict's
// line (logged, and quoted by the test's own summary).
func (c *cluster) checkHistory(r *replica) string {
	c.t.Helper()
	servers, err := history.Servers(c.api, r.api, "")
	if err != nil {
		c.t.Fatal(err)
	}
	slack := 2*leaseTTL + 2*c.cfg.PollInterval
	f := history.Final{At: time.Now(), Servers: servers, Nodes: c.historyNodes(), Holdings: c.ports()}
	v := c.rec.Require(c.t, f, history.Bounds{Build: c.cfg.BuildTimeout + slack, Delete: c.cfg.DeleteTimeout + slack})
	return v.String()
}

// deleteOnce sends one delete of id through r: the status, 0 when no
// answer came (a 503 is counted as unavailable).
func (c *cluster) deleteOnce(r *replica, id string) int {
	req, _ := http.NewRequest(http.MethodDelete, r.api+"/v2.1/servers/"+id, nil)
	resp, err := c.api.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable {
		c.unavailable.Add(1)
	}
	return resp.StatusCode
}

// deleteAll deletes ids through r, each sent again while the answer is a
// 503 or none (the database away).
func (c *cluster) deleteAll(r *replica, ids []string) {
	c.t.Helper()
	for _, id := range ids {
		c.waitWithin(buildLimit, "delete of "+id+" accepted", func() bool {
			switch code := c.deleteOnce(r, id); code {
			case http.StatusNoContent:
				return true
			case 0, http.StatusServiceUnavailable:
				return false
			default:
				c.t.Fatalf("delete %s through %s: HTTP %d", id, r.host, code)
				return false
			}
		})
	}
}

// accepted is the ids of the first n creates answered 202 so far.
func (c *cluster) accepted(n int) []string {
	var ids []string
	for _, op := range c.rec.Ops() {
		if op.Kind == history.Create && op.Code == http.StatusAccepted && len(ids) < n {
			ids = append(ids, op.Server)
		}
	}
	return ids
}

// without is ids less drop.
func without(ids, drop []string) []string {
	gone := map[string]bool{}
	for _, id := range drop {
		gone[id] = true
	}
	var out []string
	for _, id := range ids {
		if !gone[id] {
			out = append(out, id)
		}
	}
	return out
}

// waitGone waits until no id is listed any more.
func (c *cluster) waitGone(r *replica, ids []string) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%d servers deleted", len(ids)), func() bool {
		st := c.statuses(r)
		for _, id := range ids {
			if _, ok := st[id]; ok {
				return false
			}
		}
		return true
	})
}
