package serve

import (
	"database/sql"
	"testing"
	"time"

	_ "modernc.org/sqlite" // ingot's own SQLite driver, to read its ports

	"github.com/ingot-dev/ingot/internal/history"
)

// checkHistory checks what the test's client was told against the final
// state (ingot's listing, the simulator's nodes, the port rows of ingot's
// database) and returns the verdict's line.
func (f *faultyIronic) checkHistory(t *testing.T) string {
	t.Helper()
	servers, err := history.Servers(f.api.HTTP, f.api.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := history.SimNodes(hc, f.sim)
	if err != nil {
		t.Fatal(err)
	}
	slack := 2*f.cfg.PollInterval + f.cfg.Ironic.Timeout
	v := f.rec.Require(t, history.Final{At: time.Now(), Servers: servers, Nodes: nodes, Holdings: sqlitePorts(t, f.db)},
		history.Bounds{Build: f.cfg.BuildTimeout + slack, Delete: f.cfg.DeleteTimeout + slack})
	return v.String()
}

// sqlitePorts reads the port rows of the SQLite database at path.
func sqlitePorts(t *testing.T, path string) []history.Holding {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), `SELECT id, server_id, vif_node FROM ports`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []history.Holding
	for rows.Next() {
		h := history.Holding{Kind: "port"}
		if err := rows.Scan(&h.ID, &h.Server, &h.Node); err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
