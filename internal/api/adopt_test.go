package api_test

import (
	"context"
	"testing"

	"github.com/ingot-dev/ingot/internal/api"
)

// TestAdoptRoute: POST /ingot/v1/adopt passes the dry run, project and
// flavor to the adoption and answers its report; a body it does not know
// is a 400 with nothing run; without an adoption, 501.
func TestAdoptRoute(t *testing.T) {
	var got []any
	f := newFixtureWith(t, func(c *api.Config) {
		c.Adopt = func(_ context.Context, req api.AdoptRequest) (any, error) {
			got = append(got, req.DryRun, req.Project, req.Flavor)
			return map[string]any{"dry_run": req.DryRun, "adopted": []any{}}, nil
		}
	})
	r := f.do("POST", "/ingot/v1/adopt", "", map[string]any{"from": "ironic", "dry_run": true, "project": "p", "flavor": "bm"}).want(t, 200)
	if len(got) != 3 || got[0] != true || got[1] != "p" || got[2] != "bm" || r.body["dry_run"] != true {
		t.Fatalf("adoption called with %v, answered %v", got, r.body)
	}
	for _, body := range []map[string]any{{"from": "nova"}, {"from": "ironic", "force": true}, {"from": "ironic", "dry_run": "yes"}} {
		f.do("POST", "/ingot/v1/adopt", "", body).want(t, 400)
	}
	if len(got) != 3 {
		t.Fatalf("a refused body ran the adoption: %v", got)
	}
	newFixture(t).do("POST", "/ingot/v1/adopt", "", map[string]any{"from": "ironic"}).want(t, 501)
}
