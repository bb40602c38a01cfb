package api_test

import "testing"

// TestNetworkListFilters: Neutron's attribute filters on the network list.
// ingot's networks are shared and belong to no project, so shared=False or
// a project's tenant_id finds none (Tempest looks for a project's own
// networks this way), shared=True finds all; paging and unknown
// parameters do not filter; repeated values match any.
func TestNetworkListFilters(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		query string
		want  int
	}{
		{"shared=False", 0},
		{"shared=false", 0},
		{"shared=True", 2},
		{"tenant_id=some-project&shared=False", 0},
		{"project_id=some-project", 0},
		{"router:external=False", 2},
		{"router:external=true", 0},
		{"status=ACTIVE", 2},
		{"status=DOWN", 0},
		{"status=DOWN&status=ACTIVE", 2},
		{"mtu=1500", 2},
		{"name=storage&shared=True", 1},
		{"name=storage&shared=False", 0},
		{"fields=id&limit=5&unknown=x", 2},
	} {
		for _, root := range []string{"/network/v2.0", "/v2.1"} {
			l := list(t, f.do("GET", root+"/networks?"+c.query, "", nil).want(t, 200).body, "networks")
			if len(l) != c.want {
				t.Errorf("%s/networks?%s: %d networks, want %d", root, c.query, len(l), c.want)
			}
		}
	}
}
