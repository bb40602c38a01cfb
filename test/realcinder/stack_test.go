// Package realcinder runs ingot with volume.backend: cinder against the
// real services: Keystone, Cinder (cinder-api, -scheduler, -volume with
// the fake iSCSI driver of internal/cindertest) and Ironic
// (fake-hardware). Both services are reached through counting proxies,
// so a test can say which calls a build with volumes makes.
package realcinder

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/app"
	"github.com/ingot-dev/ingot/internal/cindertest"
	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/poll"
)

// world is the services, shared by the subtests of one test.
type world struct {
	cin *cindertest.Env
	ir  *ironictest.Env
	// ingotURL is where the compute endpoint the catalog names listens;
	// ln is the listener, taken before Keystone issued a token.
	ln         net.Listener
	cinderCall *counter
	ironicCall *counter
	cinderURL  string
	ironicURL  string
}

func startWorld(t *testing.T) *world {
	t.Helper()
	return startWorldWith(t, cindertest.Start(t))
}

// startWorldWith is startWorld around a Cinder already started.
func startWorldWith(t *testing.T, cin *cindertest.Env) *world {
	t.Helper()
	ir := ironictest.StartReal(t, ironictest.RealOptions{CallbackTimeout: 120 * time.Second})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Cinder asks the catalog's compute endpoint about an attachment a
	// user deletes: the catalog names ingot.
	cin.Keystone.RegisterService(t, "compute", "nova", "http://"+ln.Addr().String()+"/v2.1")
	// The package's cases together make more volumes than Cinder's default
	// quota (10) lets one project keep.
	quota := map[string]any{"quota_set": map[string]any{"volumes": -1, "gigabytes": -1}}
	if st := cin.Do(t, cin.Keystone.Token(t, "admin"), http.MethodPut, "/os-quota-sets/"+cin.Keystone.Users["member-a"].ProjectID, quota, nil); st != http.StatusOK {
		t.Fatalf("quota of project a: %d", st)
	}
	w := &world{cin: cin, ir: ir, ln: ln, cinderCall: newCounter(), ironicCall: newCounter()}
	w.cinderURL = proxy(t, cin.URL, w.cinderCall)
	w.ironicURL = proxy(t, ir.URL, w.ironicCall)
	return w
}

// stack is one ingot on the world's services; c calls it as member-a.
type stack struct {
	*apitest.Client
	t   *testing.T
	w   *world
	app *app.App
	tok string // member-a's token
	// stop ends this ingot (at once in a crash test; else at the test's end).
	stop func()
	// cancel ends the reconciler's context (its writes fail from then on).
	cancel func()
}

func (w *world) ingot(t *testing.T, rc string) *stack {
	t.Helper()
	return w.ingotOn(t, rc, filepath.Join(t.TempDir(), "ingot.db"), app.Options{})
}

// ingotOn is ingot on database db with the app's options (a step hook),
// its configuration changed by edit.
func (w *world) ingotOn(t *testing.T, rc, db string, opts app.Options, edit ...func(*config.Config)) *stack {
	t.Helper()
	cfg := config.Default()
	cfg.Database = db
	cfg.Ironic.URL = w.ironicURL
	cfg.Ironic.Timeout = 10 * time.Second
	cfg.PollInterval = 200 * time.Millisecond
	cfg.DriftInterval = 500 * time.Millisecond
	cfg.BuildTimeout = 2 * time.Minute
	cfg.DeleteTimeout = time.Minute
	cfg.Host = "ingot-cinder"
	cfg.Flavors = []config.Flavor{{Name: "bm", ResourceClass: rc, DiskGB: 10}}
	cfg.Images = []config.Image{{Name: "debian-12", URL: "http://127.0.0.1:1/debian-12.qcow2"}}
	cfg.Networks = []config.Network{{Name: "provisioning", CIDR: "10.0.0.0/24"}}
	cfg.Auth.Strategy = "keystone"
	cfg.Auth.Keystone.AuthURL = w.cin.Keystone.URL
	cfg.Auth.Keystone.Username = "ingot"
	cfg.Auth.Keystone.Password = keystonetest.Password
	cfg.Auth.Keystone.ProjectName = "service"
	cfg.Volume.Backend = config.VolumeCinder
	cfg.Volume.Cinder.URL = w.cinderURL
	for _, e := range edit {
		e(&cfg)
	}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	api := httptest.NewServer(a.Root())
	done := make(chan struct{})
	go func() { _ = a.Reconciler.Run(ctx); close(done) }()
	stop := sync.OnceFunc(func() { api.Close(); cancel(); <-done; a.Close() })
	t.Cleanup(cancel)
	t.Cleanup(stop)
	c := apitest.New(t, api.URL)
	c.Poll = 50 * time.Millisecond
	c.Token = w.cin.Keystone.Token(t, "member-a")
	return &stack{Client: c, t: t, w: w, app: a, tok: c.Token, stop: stop, cancel: cancel}
}

// serveCallback serves ingot's API on the world's listener (the compute
// endpoint of the catalog) until the test ends.
func (s *stack) serveCallback() {
	srv := &http.Server{Handler: s.app.Root(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(s.w.ln) }()
	s.t.Cleanup(func() { _ = srv.Close() })
}

// volume creates a Cinder volume as member-a and waits until available.
func (s *stack) volume(name string, bootable bool) string {
	s.t.Helper()
	var v struct {
		Volume struct{ ID, Status string } `json:"volume"`
	}
	body := map[string]any{"volume": map[string]any{"size": 1, "name": name}}
	if st := s.w.cin.Do(s.t, s.tok, http.MethodPost, "/volumes", body, &v); st != http.StatusAccepted {
		s.t.Fatalf("create volume: %d", st)
	}
	id := v.Volume.ID
	if bootable {
		act := map[string]any{"os-set_bootable": map[string]any{"bootable": true}}
		poll.Until(s.t, time.Minute, "volume "+id+" available", func() (bool, string) {
			st := s.volumeStatus(id)
			return st == "available", st
		})
		if st := s.w.cin.Do(s.t, s.tok, http.MethodPost, "/volumes/"+id+"/action", act, nil); st != http.StatusOK {
			s.t.Fatalf("set bootable: %d", st)
		}
	}
	poll.Until(s.t, time.Minute, "volume "+id+" available", func() (bool, string) {
		st := s.volumeStatus(id)
		if st == "error" {
			s.t.Fatalf("volume %s went to error", id)
		}
		return st == "available", st
	})
	return id
}

// volumeStatus is the volume's status in Cinder ("gone" after its deletion).
func (s *stack) volumeStatus(id string) string {
	var v struct {
		Volume struct{ Status string } `json:"volume"`
	}
	if st := s.w.cin.Do(s.t, s.tok, http.MethodGet, "/volumes/"+id, nil, &v); st == http.StatusNotFound {
		return "gone"
	}
	return v.Volume.Status
}

// counts are Cinder's attachments (every project's) and the Ironic volume
// targets of the nodes.
func (s *stack) counts(nodes ...string) (attachments, targets int) {
	s.t.Helper()
	_, attachments = s.w.cin.Counts(s.t)
	for _, n := range nodes {
		targets += len(s.w.ir.ListVolumeTargets(s.t, n))
	}
	return attachments, targets
}

// waitClean waits until nothing of ours is left: no attachment, no target.
func (s *stack) waitClean(nodes ...string) {
	s.t.Helper()
	s.WaitFor("no attachments and no targets", 30*time.Second, func() bool {
		a, tg := s.counts(nodes...)
		return a == 0 && tg == 0
	})
}

// counter counts requests by method and path (ids replaced by {id}).
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func newCounter() *counter { return &counter{n: map[string]int{}} }

var idRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}`)

func (c *counter) add(r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[r.Method+" "+idRE.ReplaceAllString(r.URL.Path, "{id}")]++
}

// take returns the counts since the last take, sorted, and resets them.
func (c *counter) take() (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var lines []string
	total := 0
	for k, v := range c.n {
		lines = append(lines, fmt.Sprintf("%d %s", v, k))
		total += v
	}
	sort.Strings(lines)
	c.n = map[string]int{}
	return strings.Join(lines, "; "), total
}

func (c *counter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// proxy forwards to target, counting each request.
func proxy(t *testing.T, target string, c *counter) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.add(r)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + u.Path
}
