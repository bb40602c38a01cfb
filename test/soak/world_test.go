package soak

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // ingot's own SQLite driver, to read its ports

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/faulttest"
	"github.com/ingot-dev/ingot/internal/history"
	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/pgtest"
)

var (
	simRe = regexp.MustCompile(`ironic simulator listening on (http://\S+) `)
	hc    = &http.Client{Timeout: 10 * time.Second}
)

// world is the soak's processes: the simulator and one ingot a slot (one
// on SQLite, three replicas on PostgreSQL), each slot with its own links.
type world struct {
	t     *testing.T
	mode  string
	sim   string // the simulator's URL (not through a link)
	db    string // the SQLite file or the PostgreSQL DSN (not through a link)
	cfg   config.Config
	slots []*slot
}

// slot is one ingot and its links; the process changes when it is killed
// and started again.
type slot struct {
	name   string
	config string
	ironic *faulttest.Link
	pg     *faulttest.Link // nil on SQLite

	mu      sync.Mutex
	p       *ingottest.Proc
	started int // how many processes the slot ran
	down    bool
}

func newWorld(t *testing.T, s settings) *world {
	w := &world{t: t, mode: s.mode}
	sim := ingottest.Start(t, ingottest.Binary(t), ingottest.Options{}, "sim", "--nodes", fmt.Sprint(s.nodes), "--listen", "127.0.0.1:0",
		"--deploy-time", "2s", "--undeploy-time", "500ms", "--vif-mode", "store", "--ports", "1", "--seed", fmt.Sprint(s.seed))
	w.sim = sim.WaitLog(simRe, 30*time.Second)
	n, extra := 1, ""
	if s.mode == "replicas" {
		n, w.db = 3, pgtest.DSN(t)
		extra = "shards: 64\nlease_ttl: 3s\ndrift_interval: 2s\n"
	} else {
		w.db = filepath.Join(t.TempDir(), "ingot.db")
	}
	dir := t.TempDir()
	for i := range n {
		sl := &slot{name: fmt.Sprintf("ingot-%d", i), ironic: faulttest.New(t, fmt.Sprintf("ironic-%d", i), hostOf(t, w.sim))}
		db := w.db
		if s.mode == "replicas" {
			sl.pg = faulttest.New(t, fmt.Sprintf("pg-%d", i), hostOf(t, w.db))
			db = sl.pg.Rewrite(w.db)
		}
		yaml := fmt.Sprintf(`database: %s
host: %s
%spoll_interval: 200ms
build_timeout: 5m
ironic: {url: %s, timeout: 3s}
flavors: [{name: bm, resource_class: baremetal, vcpus: 8, ram_mb: 16384, disk_gb: 100}]
images: [{name: debian-12, url: "http://images.example/debian-12.qcow2"}]
networks: [{name: provisioning, cidr: 10.0.0.0/22}]
`, db, sl.name, extra, sl.ironic.Rewrite(w.sim))
		sl.config = filepath.Join(dir, sl.name+".yaml")
		if err := os.WriteFile(sl.config, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			cfg, err := config.Parse([]byte(yaml))
			if err != nil {
				t.Fatal(err)
			}
			w.cfg = cfg
		}
		w.slots = append(w.slots, sl)
	}
	for _, sl := range w.slots {
		w.start(sl)
	}
	return w
}

func hostOf(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		t.Fatalf("soak: no host in %q", raw)
	}
	return u.Host
}

// start runs the slot's ingot serve and waits until it answers.
func (w *world) start(sl *slot) {
	sl.mu.Lock()
	sl.started++
	log := filepath.Join(w.t.TempDir(), fmt.Sprintf("%s.%d.log", sl.name, sl.started))
	sl.mu.Unlock()
	p := ingottest.Serve(w.t, ingottest.Binary(w.t), sl.config, ingottest.Options{Log: log})
	sl.mu.Lock()
	sl.p, sl.down = p, false
	sl.mu.Unlock()
}

// proc is the slot's process, nil while it is down.
func (sl *slot) proc() *ingottest.Proc {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.down {
		return nil
	}
	return sl.p
}

// kill ends the slot's process with SIGKILL; the slot is down until start.
func (sl *slot) kill() {
	sl.mu.Lock()
	p := sl.p
	sl.down = true
	sl.mu.Unlock()
	p.Kill()
}

// api is a serving ingot's API, chosen at random among the slots up ("" if none).
func (w *world) api(rng *rand.Rand) string {
	var up []string
	for _, sl := range w.slots {
		if p := sl.proc(); p != nil && p.Alive() {
			up = append(up, p.API)
		}
	}
	if len(up) == 0 {
		return ""
	}
	return up[rng.IntN(len(up))]
}

// ports is every port row of ingot's database.
func (w *world) ports(ctx context.Context) ([]history.Holding, error) {
	const q = `SELECT id, server_id, vif_node FROM ports`
	var out []history.Holding
	scan := func(next func() bool, scan func(...any) error) error {
		for next() {
			h := history.Holding{Kind: "port"}
			if err := scan(&h.ID, &h.Server, &h.Node); err != nil {
				return err
			}
			out = append(out, h)
		}
		return nil
	}
	if w.mode == "replicas" {
		conn, err := pgx.Connect(ctx, w.db)
		if err != nil {
			return nil, err
		}
		defer conn.Close(ctx)
		rs, err := conn.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rs.Close()
		if err := scan(rs.Next, rs.Scan); err != nil {
			return nil, err
		}
		return out, rs.Err()
	}
	db, err := sql.Open("sqlite", "file:"+w.db+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if err := scan(rows.Next, rows.Scan); err != nil {
		return nil, err
	}
	return out, rows.Err()
}
