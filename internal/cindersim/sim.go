// Package cindersim is an in-process Cinder for deterministic tests: the
// part of the block-storage API v3 that ingot's internal/cinder calls
// (volumes; attachments at microversions 3.27-3.44 with os-complete), with
// the real Cinder's statuses, refusals and messages, and its call-back to
// the compute endpoint when a user's token alone deletes a connected
// attachment. The adapter tests of internal/cinder hold it to the real
// Cinder (internal/cindertest): the same checks run against both.
//
// Unlike the real one it is synchronous: a created volume answers
// "creating" and is "available" from the next read; a deleted one is gone.
// Tokens are whatever AddToken was told (no Keystone).
package cindersim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
)

// Identity is what a token stands for.
type Identity struct {
	ProjectID string
	Roles     []string
}

func (id Identity) has(role string) bool {
	for _, r := range id.Roles {
		if r == role {
			return true
		}
	}
	return false
}

// Options configure a Sim; the zero value is usable.
type Options struct {
	Clock clock.Clock // default clock.Real{}
	// HTTPClient makes the call-back to compute (default one with a 10 s timeout).
	HTTPClient *http.Client
}

// Sim is one simulated Cinder. Safe for concurrent use.
type Sim struct {
	clk clock.Clock
	hc  *http.Client

	mu          sync.Mutex
	tokens      map[string]Identity
	volumes     map[string]*volume
	attachments map[string]*attachment
	computeURL  string
	calls       map[string]int
	images      map[string]bool
	// creatingReads and creatingFinal: SetCreating.
	creatingReads int
	creatingFinal string
}

// New makes an empty Sim.
func New(o Options) *Sim {
	s := &Sim{clk: o.Clock, hc: o.HTTPClient, tokens: map[string]Identity{},
		volumes: map[string]*volume{}, attachments: map[string]*attachment{}, calls: map[string]int{}, images: map[string]bool{}}
	if s.clk == nil {
		s.clk = clock.Real{}
	}
	if s.hc == nil {
		s.hc = &http.Client{Timeout: 10 * time.Second}
	}
	return s
}

// AddToken makes token valid for id.
func (s *Sim) AddToken(token string, id Identity) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = id
}

// AddImage makes an image the image service would serve (a volume can
// be made from it).
func (s *Sim) AddImage(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.images[id] = true
}

// SetComputeURL is the catalog's compute endpoint as Cinder would find it
// (e.g. http://127.0.0.1:8774/v2.1); "" means none.
func (s *Sim) SetComputeURL(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.computeURL = strings.TrimRight(url, "/")
}

// Calls counts the requests served, by "METHOD pattern".
func (s *Sim) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// Counts are the volumes and attachments the Sim holds.
func (s *Sim) Counts() (volumes, attachments int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.volumes), len(s.attachments)
}

// call is one authenticated request.
type call struct {
	id      Identity
	token   string
	service bool // X-Service-Token of a user with the role service
	version [2]int
}

// Handler serves the API under /v3 (the endpoint is http://host/v3).
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	route := func(pattern string, min [2]int, h func(http.ResponseWriter, *http.Request, call)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.calls[pattern]++
			c, ok := s.auth(r)
			s.mu.Unlock()
			if !ok {
				fault(w, http.StatusUnauthorized, "The request you have made requires authentication.")
				return
			}
			if less(c.version, min) {
				fault(w, http.StatusNotFound, "The resource could not be found.")
				return
			}
			h(w, r, c)
		})
	}
	v3, attach, complete := [2]int{3, 0}, [2]int{3, 27}, [2]int{3, 44}
	route("GET /v3/volumes/detail", v3, s.listVolumes)
	route("POST /v3/volumes", v3, s.createVolume)
	route("GET /v3/volumes/{id}", v3, s.getVolume)
	route("DELETE /v3/volumes/{id}", v3, s.deleteVolume)
	route("POST /v3/volumes/{id}/action", v3, s.volumeAction)
	route("GET /v3/attachments/detail", attach, s.listAttachments)
	route("POST /v3/attachments", attach, s.createAttachment)
	route("GET /v3/attachments/{id}", attach, s.getAttachment)
	route("PUT /v3/attachments/{id}", attach, s.updateAttachment)
	route("DELETE /v3/attachments/{id}", attach, s.deleteAttachment)
	route("POST /v3/attachments/{id}/action", complete, s.attachmentAction)
	return mux
}

// auth reads the tokens and the microversion (s.mu held).
func (s *Sim) auth(r *http.Request) (call, bool) {
	tok := r.Header.Get("X-Auth-Token")
	id, ok := s.tokens[tok]
	if !ok {
		return call{}, false
	}
	c := call{id: id, token: tok, version: [2]int{3, 0}}
	if st := r.Header.Get("X-Service-Token"); st != "" {
		sid, ok := s.tokens[st]
		c.service = ok && sid.has("service")
	}
	for _, h := range []string{r.Header.Get("OpenStack-API-Version"), r.Header.Get("X-OpenStack-Volume-API-Version")} {
		if v, ok := parseVersion(strings.TrimPrefix(h, "volume ")); ok {
			c.version = v
			break
		}
	}
	return c, true
}

func parseVersion(s string) ([2]int, bool) {
	maj, min, ok := strings.Cut(strings.TrimSpace(s), ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	return [2]int{a, b}, ok && err1 == nil && err2 == nil
}

func less(a, b [2]int) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }

// fault answers Cinder's error body.
func fault(w http.ResponseWriter, status int, msg string) {
	key := map[int]string{400: "badRequest", 401: "error", 404: "itemNotFound", 409: "conflictingRequest"}[status]
	if key == "" {
		key = "computeFault"
	}
	reply(w, status, map[string]any{key: map[string]any{"code": status, "message": msg}})
}

// decode reads the JSON body into v, or answers 400.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		fault(w, http.StatusBadRequest, "Malformed request body")
		return false
	}
	return true
}

func reply(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if body != nil {
		_ = json.NewEncoder(w).Encode(body)
	}
}

// timeFormat is Cinder's (no zone).
const timeFormat = "2006-01-02T15:04:05.000000"
