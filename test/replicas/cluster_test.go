package replicas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/history"
	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/pgtest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/store"
)

// The cluster's settings: short leases and a quick loop, so a failover
// takes seconds (INGOT_REPLICAS_LEASE_TTL measures another, e.g. the
// default 10s).
const (
	shards     = 64
	deployTime = 4 * time.Second
	buildLimit = 5 * time.Minute // every wait's bound: far above what a build takes here
)

var leaseTTL = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("INGOT_REPLICAS_LEASE_TTL")); err == nil && d > 0 {
		return d
	}
	return 3 * time.Second
}()

var (
	simRe = regexp.MustCompile(`ironic simulator listening on (http://\S+) `)
	hc    = &http.Client{Timeout: 10 * time.Second}
)

// cluster is one test's world: the database, the simulator and the replicas.
type cluster struct {
	t    *testing.T
	dir  string
	dsn  string
	sim  string // the simulator's URL
	reps []*replica
	cfg  config.Config // what every replica's file says, parsed
	bin  string        // the ingot the replicas start with
	// retryUnavailable: a create answered 503 (the database away) is sent
	// again, as a client would, and counted in unavailable; otherwise it
	// fails the test.
	retryUnavailable bool
	unavailable      atomic.Int64
	// rec records every create, show, list and delete sent through api,
	// for the history check at the end (internal/history).
	rec *history.Recorder
	api *http.Client
}

// replica is one `ingot serve` with its configuration and its proxy.
type replica struct {
	c      *cluster
	host   string
	config string
	proxy  *recorder
	p      *ingottest.Proc
	api    string
	bin    string // the ingot it runs (the cluster's, until an upgrade)
	// migrate: start with serve --migrate (an upgraded replica may find
	// the database at the older release's schema).
	migrate bool
}

// call is one request a replica sent to Ironic, as its proxy saw it.
type call struct {
	at     time.Time
	method string
	path   string
	body   string
}

// recorder is a replica's way to the simulator: a reverse proxy that logs
// every request that is not a read.
type recorder struct {
	url   string
	mu    sync.Mutex
	calls []call
}

func (r *recorder) log() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.calls...)
}

func newRecorder(t *testing.T, target string) *recorder {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0) // a killed replica's calls in flight end in errors here
	r := &recorder{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			body, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(body))
			r.mu.Lock()
			r.calls = append(r.calls, call{at: time.Now(), method: req.Method, path: req.URL.Path, body: string(body)})
			r.mu.Unlock()
		}
		rp.ServeHTTP(w, req)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	r.url = "http://" + ln.Addr().String()
	return r
}

// newCluster starts the simulator with nodes nodes and n replicas on a
// fresh database, and waits until the replicas share every shard.
func newCluster(t *testing.T, nodes, n int) *cluster {
	return newClusterPolling(t, nodes, n, 200*time.Millisecond)
}

// newClusterPolling is newCluster with the replicas' poll_interval.
func newClusterPolling(t *testing.T, nodes, n int, poll time.Duration) *cluster {
	return newClusterOf(t, ingottest.Binary(t), nodes, n, poll)
}

// newClusterOf is newClusterPolling with the replicas running bin (an
// earlier release, for the upgrade test).
func newClusterOf(t *testing.T, bin string, nodes, n int, poll time.Duration) *cluster {
	return newClusterOn(t, bin, pgtest.DSN(t), nodes, n, poll, nil)
}

// newClusterOn is newClusterOf on the database dsn (a private server the
// test restarts), replica i reaching it at via(i, dsn) when via is set (a
// link through a fault proxy).
func newClusterOn(t *testing.T, bin, dsn string, nodes, n int, poll time.Duration, via func(i int, dsn string) string) *cluster {
	c := &cluster{t: t, dir: t.TempDir(), dsn: dsn, bin: bin, rec: history.New()}
	c.api = c.rec.Client(10 * time.Second)
	sim := ingottest.Start(t, ingottest.Binary(t), ingottest.Options{}, "sim", "--nodes", fmt.Sprint(nodes), "--listen", "127.0.0.1:0",
		"--deploy-time", deployTime.String(), "--undeploy-time", "500ms", "--vif-mode", "store", "--ports", "1", "--seed", "1")
	c.sim = sim.WaitLog(simRe, 30*time.Second)
	for i := range n {
		r := &replica{c: c, host: fmt.Sprintf("replica-%d", i), proxy: newRecorder(t, c.sim), bin: bin}
		r.config = filepath.Join(c.dir, r.host+".yaml")
		yaml := fmt.Sprintf(`database: %s
host: %s
shards: %d
lease_ttl: %s
poll_interval: %s
drift_interval: %s
build_timeout: 10m
ironic: {url: %s, timeout: 10s}
flavors: [{name: bm, resource_class: baremetal, vcpus: 8, ram_mb: 16384, disk_gb: 100}]
images: [{name: debian-12, url: "http://images.example/debian-12.qcow2"}]
networks: [{name: provisioning, cidr: 10.0.0.0/22}]
`, r.dsn(i, via), r.host, shards, leaseTTL, poll, max(2*time.Second, poll), r.proxy.url)
		if err := os.WriteFile(r.config, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			cfg, err := config.Parse([]byte(yaml))
			if err != nil {
				t.Fatal(err)
			}
			c.cfg = cfg
		}
		c.reps = append(c.reps, r)
	}
	for _, r := range c.reps {
		r.start()
	}
	c.waitBalanced(c.reps)
	return c
}

// dsn is the database as replica i reaches it.
func (r *replica) dsn(i int, via func(i int, dsn string) string) string {
	if via == nil {
		return r.c.dsn
	}
	return via(i, r.c.dsn)
}

// start runs the replica's serve and waits until it answers.
func (r *replica) start() {
	args := []string{"serve", "--config", r.config, "--listen", "127.0.0.1:0"}
	if r.migrate {
		args = append(args, "--migrate")
	}
	r.p = ingottest.Start(r.c.t, r.bin, ingottest.Options{}, args...).Serving()
	r.api = r.p.API
}

// status is the replica part of /readyz.
type status struct {
	Host   string `json:"host"`
	Live   int    `json:"live_replicas"`
	Leases []struct {
		Shard int   `json:"shard"`
		Epoch int64 `json:"epoch"`
	} `json:"leases"`
}

// ready reads the replica's /readyz; false when it does not answer.
func (r *replica) ready() (status, bool) {
	var out struct {
		Status  string `json:"status"`
		Replica status `json:"replica"`
	}
	resp, err := (&http.Client{Timeout: time.Second}).Get(r.api + "/readyz")
	if err != nil {
		return status{}, false
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Status != "ok" {
		return status{}, false
	}
	return out.Replica, true
}

// holders maps shard -> (host, epoch) from the replicas' /readyz.
func holders(reps []*replica) map[int]struct {
	host  string
	epoch int64
} {
	out := map[int]struct {
		host  string
		epoch int64
	}{}
	for _, r := range reps {
		st, ok := r.ready()
		if !ok {
			continue
		}
		for _, l := range st.Leases {
			out[l.Shard] = struct {
				host  string
				epoch int64
			}{r.host, l.Epoch}
		}
	}
	return out
}

// waitBalanced waits until reps hold every shard between them, none more
// than its share.
func (c *cluster) waitBalanced(reps []*replica) {
	c.t.Helper()
	share := store.Share(shards, len(reps))
	c.waitFor("shards shared by "+fmt.Sprint(len(reps))+" replicas", func() bool {
		n := 0
		for _, r := range reps {
			st, ok := r.ready()
			if !ok || len(st.Leases) > share || st.Live != len(reps) {
				return false
			}
			n += len(st.Leases)
		}
		return n == shards && len(holders(reps)) == shards
	})
}

func (c *cluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	c.waitWithin(buildLimit, what, cond)
}

func (c *cluster) waitWithin(limit time.Duration, what string, cond func() bool) {
	c.t.Helper()
	poll.Until(c.t, limit, what, func() (bool, string) { return cond(), "" })
}

// create asks replica r's API for a server; the id, or "" when the request
// got no answer (a replica going away: the caller asks another).
func (c *cluster) create(r *replica, name string) (string, int) {
	body, _ := json.Marshal(map[string]any{"server": map[string]any{"name": name, "flavorRef": "bm",
		"imageRef": c.cfg.Images[0].ID, "networks": []map[string]string{{"uuid": c.cfg.Networks[0].ID}}}})
	req, _ := http.NewRequest(http.MethodPost, r.api+"/v2.1/servers", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.api.Do(req)
	if err != nil {
		return "", 0
	}
	defer resp.Body.Close()
	var out struct {
		Server struct {
			ID string `json:"id"`
		} `json:"server"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return out.Server.ID, resp.StatusCode
}

// statuses lists every server's status through replica r.
func (c *cluster) statuses(r *replica) map[string]string {
	c.t.Helper()
	servers, err := history.Servers(c.api, r.api, "")
	if err != nil {
		c.t.Fatalf("through %s: %v", r.host, err)
	}
	out := map[string]string{}
	for id, s := range servers {
		out[id] = s.Status
	}
	return out
}

// waitActive waits until every id is ACTIVE (through r), failing on ERROR.
func (c *cluster) waitActive(r *replica, ids []string) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%d servers ACTIVE", len(ids)), func() bool {
		c.rec.ObserveNodes(c.historyNodes())
		st := c.statuses(r)
		for _, id := range ids {
			if st[id] == "ERROR" {
				c.t.Fatalf("server %s is ERROR", id)
			}
			if st[id] != "ACTIVE" {
				return false
			}
		}
		return true
	})
}

// simNode is a node as the simulator's admin API shows it.
type simNode struct {
	UUID           string `json:"uuid"`
	ProvisionState string `json:"provision_state"`
	InstanceUUID   string `json:"instance_uuid"`
}

func (c *cluster) nodes() []simNode {
	c.t.Helper()
	resp, err := hc.Get(c.sim + "/_sim/nodes")
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Nodes []simNode `json:"nodes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		c.t.Fatal(err)
	}
	return out.Nodes
}

// row is a server as the database holds it.
type row struct {
	version int64
	node    string
	phase   string
}

func (c *cluster) rows() map[string]row {
	c.t.Helper()
	conn, err := pgx.Connect(c.t.Context(), c.dsn)
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close(c.t.Context())
	rs, err := conn.Query(c.t.Context(), `SELECT id, version, node_id, phase FROM servers`)
	if err != nil {
		c.t.Fatal(err)
	}
	defer rs.Close()
	out := map[string]row{}
	for rs.Next() {
		var id string
		var r row
		if err := rs.Scan(&id, &r.version, &r.node, &r.phase); err != nil {
			c.t.Fatal(err)
		}
		out[id] = r
	}
	if err := rs.Err(); err != nil {
		c.t.Fatal(err)
	}
	return out
}

// checkPlacement checks I3 and I4 once every build of ids is ACTIVE: each
// server on one node, the node the database records, no node carrying
// anything else of ours, and every other node available.
func (c *cluster) checkPlacement(ids []string) {
	c.t.Helper()
	rows := c.rows()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	on := map[string]string{}
	for _, n := range c.nodes() {
		if n.InstanceUUID == "" {
			if n.ProvisionState != "available" {
				c.t.Errorf("node %s is %s with no instance (leaked)", n.UUID, n.ProvisionState)
			}
			continue
		}
		if prev, dup := on[n.InstanceUUID]; dup {
			c.t.Errorf("I4: server %s on nodes %s and %s", n.InstanceUUID, prev, n.UUID)
		}
		on[n.InstanceUUID] = n.UUID
		if !want[n.InstanceUUID] {
			c.t.Errorf("I3: node %s carries %s, not a live server of this test", n.UUID, n.InstanceUUID)
		}
		if r := rows[n.InstanceUUID]; r.node != n.UUID || n.ProvisionState != "active" {
			c.t.Errorf("node %s (%s) carries %s, which the database puts on %q (%s)", n.UUID, n.ProvisionState, n.InstanceUUID, r.node, r.phase)
		}
	}
	for _, id := range ids {
		if _, ok := on[id]; !ok {
			c.t.Errorf("ACTIVE server %s: no node carries it", id)
		}
	}
}

// serverOf maps a call to the server it was made for: the node's
// instance_uuid now (nodes maps node -> server), or the one a reservation
// names.
func serverOf(cl call, nodes map[string]string) string {
	rest, ok := strings.CutPrefix(cl.path, "/v1/nodes/")
	if !ok {
		return ""
	}
	node, _, _ := strings.Cut(rest, "/")
	if s := nodes[node]; s != "" {
		return s
	}
	if m := regexp.MustCompile(`"instance_uuid",\s*"value":\s*"([0-9a-f-]{36})"`).FindStringSubmatch(cl.body); m != nil {
		return m[1]
	}
	return ""
}

func nodeServers(ns []simNode) map[string]string {
	out := map[string]string{}
	for _, n := range ns {
		if n.InstanceUUID != "" {
			out[n.UUID] = n.InstanceUUID
		}
	}
	return out
}
