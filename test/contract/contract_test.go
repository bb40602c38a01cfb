package contract

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestContractSim runs the suite against the simulator.
func TestContractSim(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	runChecks(t, simTarget(t, nil), allChecks(), reportToT)
	t.Cleanup(func() { t.Logf("suite against the simulator: %s", time.Since(begin).Round(time.Millisecond)) })
}

// TestContractReal runs the suite against the real Ironic: skipped when it
// is not installed, a failure then with INGOT_TEST_IRONIC=1.
func TestContractReal(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	runChecks(t, realTarget(t), allChecks(), reportToT)
	t.Cleanup(func() { t.Logf("suite against the real Ironic: %s", time.Since(begin).Round(time.Millisecond)) })
}

// breakage is a deliberately wrong simulator: a middleware over its handler
// and the checks that must catch it.
type breakage struct {
	name    string
	wrap    func(http.Handler) http.Handler
	catches []string
}

var breakages = []breakage{
	{
		// DELETE of an associated node answers 404 instead of 409 NodeAssociated.
		name: "delete-associated-is-404",
		wrap: rewrite(func(r *http.Request, status int, body []byte) (int, []byte) {
			if r.Method == "DELETE" && status == 409 && bytes.Contains(body, []byte("is associated with instance")) {
				id := strings.TrimPrefix(r.URL.Path, "/v1/nodes/")
				return 404, errorBody("Node " + id + " could not be found.")
			}
			return status, body
		}),
		catches: []string{"node.delete-associated", "node.delete-active", "longdeploy.wait-callback"},
	},
	{
		// The next link keeps the list's filters (the real Ironic drops them).
		name: "pagination-keeps-filters",
		wrap: rewrite(func(r *http.Request, status int, body []byte) (int, []byte) {
			if r.Method != "GET" || !strings.HasPrefix(r.URL.Path, "/v1/nodes") || status != 200 {
				return status, body
			}
			var list map[string]any
			if json.Unmarshal(body, &list) != nil {
				return status, body
			}
			next, _ := list["next"].(string)
			u, err := url.Parse(next)
			if next == "" || err != nil {
				return status, body
			}
			q := u.Query()
			for k, vs := range r.URL.Query() {
				if !q.Has(k) {
					q[k] = vs
				}
			}
			u.RawQuery = q.Encode()
			list["next"] = u.String()
			out, _ := json.Marshal(list)
			return status, out
		}),
		catches: []string{"list.pagination-quirk"},
	},
	{
		// Error bodies are single-encoded: {"error_message": {…}}.
		name: "errors-single-encoded",
		wrap: rewrite(func(r *http.Request, status int, body []byte) (int, []byte) {
			var outer struct {
				ErrorMessage string `json:"error_message"`
			}
			if status < 400 || json.Unmarshal(body, &outer) != nil || outer.ErrorMessage == "" {
				return status, body
			}
			out, _ := json.Marshal(map[string]json.RawMessage{"error_message": json.RawMessage(outer.ErrorMessage)})
			return status, out
		}),
		catches: []string{"node.not-found", "list.limit-zero", "reserve.conflicts", "version.not-acceptable"},
	},
	{
		// A PATCH during a state transition is accepted (the real Ironic
		// refuses it with 409 until the deploy ends).
		name: "patch-during-transition-accepted",
		wrap: func(next http.Handler) http.Handler {
			return rewrite(func(r *http.Request, status int, body []byte) (int, []byte) {
				if r.Method != "PATCH" || status != 409 || !bytes.Contains(body, []byte("state transition is in progress")) {
					return status, body
				}
				get := httptest.NewRecorder()
				next.ServeHTTP(get, httptest.NewRequest("GET", r.URL.Path, nil))
				return 200, get.Body.Bytes()
			})(next)
		},
		catches: []string{"longdeploy.wait-callback", "longdeploy.maintenance-remove-instance", "locked.deploying"},
	},
}

// TestContractHasTeeth runs the checks meant to catch each breakage against
// a simulator broken that way, and requires every one of them to fail.
func TestContractHasTeeth(t *testing.T) {
	t.Parallel()
	byName := map[string]check{}
	for _, ck := range allChecks() {
		byName[ck.name] = ck
	}
	for _, b := range breakages {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			var list []check
			for _, name := range b.catches {
				ck, ok := byName[name]
				if !ok {
					t.Fatalf("no check %q", name)
				}
				ck.simSkip = "" // a skipped check would prove nothing
				list = append(list, ck)
			}
			var mu sync.Mutex
			caught := map[string]error{}
			t.Run("checks", func(t *testing.T) {
				runChecks(t, simTarget(t, b.wrap), list, func(t *testing.T, ck check, r result) {
					mu.Lock()
					caught[ck.name] = r.err
					mu.Unlock()
				})
			})
			for _, name := range b.catches {
				if err, ran := caught[name]; !ran {
					t.Errorf("check %s did not run", name)
				} else if err == nil {
					t.Errorf("check %s passed against a simulator broken by %s", name, b.name)
				} else {
					t.Logf("%s caught it: %v", name, err)
				}
			}
		})
	}
}

// rewrite is a middleware that lets f change each response's status and body.
func rewrite(f func(r *http.Request, status int, body []byte) (int, []byte)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			status, body := f(r, rec.Code, rec.Body.Bytes())
			for k, vs := range rec.Header() {
				w.Header()[k] = vs
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(status)
			_, _ = w.Write(body)
		})
	}
}

// errorBody is Ironic's double-encoded client error.
func errorBody(faultstring string) []byte {
	inner, _ := json.Marshal(map[string]any{"faultcode": "Client", "faultstring": faultstring, "debuginfo": nil})
	out, _ := json.Marshal(map[string]string{"error_message": string(inner)})
	return out
}
