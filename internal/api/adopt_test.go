package api_test

import (
	"context"
	"testing"

	"github.com/ingot-dev/ingot/internal/api"
)

// TestAdoptRoute: POST /ingot/v1/adopt passes the source, dry run,
// project and flavor to the adoption and answers its report; a body it does not know
// is a 400 with nothing run; without an adoption, 501.
func TestAdoptRoute(t *testing.T) {
	var got []any
	f := newFixtureWith(t, func(c *api.Config) {
		c.Adopt = func(_ context.Context, req api.AdoptRequest) (any, error) {
			got = append(got, req.From, req.DryRun, req.Project, req.Flavor)
			return map[string]any{"dry_run": req.DryRun, "adopted": []any{}}, nil
		}
	})
	r := f.do("POST", "/ingot/v1/adopt", "", map[string]any{"from": "ironic", "dry_run": true, "project": "p", "flavor": "bm"}).want(t, 200)
	if len(got) != 4 || got[0] != "ironic" || got[1] != true || got[2] != "p" || got[3] != "bm" || r.body["dry_run"] != true {
		t.Fatalf("adoption called with %v, answered %v", got, r.body)
	}
	f.do("POST", "/ingot/v1/adopt", "", map[string]any{"from": "nova"}).want(t, 200)
	if len(got) != 8 || got[4] != "nova" {
		t.Fatalf("from nova: adoption called with %v", got)
	}
	for _, body := range []map[string]any{{"from": "glance"}, {"from": "ironic", "force": true}, {"from": "ironic", "dry_run": "yes"}} {
		f.do("POST", "/ingot/v1/adopt", "", body).want(t, 400)
	}
	if len(got) != 8 {
		t.Fatalf("a refused body ran the adoption: %v", got)
	}
	newFixture(t).do("POST", "/ingot/v1/adopt", "", map[string]any{"from": "ironic"}).want(t, 501)
}
