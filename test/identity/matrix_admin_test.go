package identity

import (
	"fmt"
	"net/http"
	"testing"
)

// adminAttacks are the matrix rows of the admin compute surface: project
// B's member and reader are refused every admin route (hypervisors would
// show A's server by id with_servers), and cannot read, delete or build
// into A's server group.
func adminAttacks(v victim) map[string][]attempt {
	w := func(method, path, mv string, body any) attempt {
		return attempt{method: method, path: path, mv: mv, body: body, write: true}
	}
	at := func(path, mv string) attempt { return attempt{method: "GET", path: path, mv: mv} }
	hint := map[string]any{"server": map[string]any{"name": "intruder", "imageRef": "debian-12", "flavorRef": "1", "networks": "auto"},
		"os:scheduler_hints": map[string]any{"group": v.group}}
	agg := fmt.Sprintf("/v2.1/os-aggregates/%d", v.aggregate)
	flavorBody := map[string]any{"flavor": map[string]any{"name": "evil", "ram": 1, "vcpus": 1, "disk": 1}}
	return map[string][]attempt{
		"GET /v2.1/os-hypervisors":                {at("/v2.1/os-hypervisors?with_servers=true", "2.53"), at("/v2.1/os-hypervisors", "2.1")},
		"GET /v2.1/os-hypervisors/detail":         {at("/v2.1/os-hypervisors/detail?with_servers=1", "2.53")},
		"GET /v2.1/os-hypervisors/statistics":     {at("/v2.1/os-hypervisors/statistics", "2.1")},
		"GET /v2.1/os-hypervisors/{id}":           {at("/v2.1/os-hypervisors/1", "2.1")},
		"GET /v2.1/os-hypervisors/{id}/uptime":    {at("/v2.1/os-hypervisors/1/uptime", "2.1")},
		"GET /v2.1/os-hypervisors/{id}/search":    {at("/v2.1/os-hypervisors/-/search", "2.1")},
		"GET /v2.1/os-hypervisors/{id}/servers":   {at("/v2.1/os-hypervisors/-/servers", "2.1")},
		"GET /v2.1/os-services":                   {at("/v2.1/os-services", "2.1")},
		"PUT /v2.1/os-services/{id}":              {w("PUT", "/v2.1/os-services/disable", "2.1", map[string]any{"host": "ingot-matrix", "binary": "nova-compute"})},
		"DELETE /v2.1/os-services/{id}":           {w("DELETE", "/v2.1/os-services/1", "2.1", nil)},
		"GET /v2.1/os-hosts":                      {at("/v2.1/os-hosts", "2.1")},
		"GET /v2.1/os-hosts/{host}":               {at("/v2.1/os-hosts/ingot-matrix", "2.1")},
		"PUT /v2.1/os-hosts/{host}":               {w("PUT", "/v2.1/os-hosts/ingot-matrix", "2.1", map[string]any{"status": "disable"})},
		"GET /v2.1/os-hosts/{host}/startup":       {w("GET", "/v2.1/os-hosts/ingot-matrix/startup", "2.1", nil)},
		"GET /v2.1/os-hosts/{host}/shutdown":      {w("GET", "/v2.1/os-hosts/ingot-matrix/shutdown", "2.1", nil)},
		"GET /v2.1/os-hosts/{host}/reboot":        {w("GET", "/v2.1/os-hosts/ingot-matrix/reboot", "2.1", nil)},
		"POST /v2.1/flavors":                      {w("POST", "/v2.1/flavors", "2.1", flavorBody)},
		"PUT /v2.1/flavors/{id}":                  {w("PUT", "/v2.1/flavors/1", "2.55", map[string]any{"flavor": map[string]any{"description": "x"}})},
		"DELETE /v2.1/flavors/{id}":               {w("DELETE", "/v2.1/flavors/1", "2.1", nil)},
		"GET /v2.1/flavors/{id}/os-flavor-access": {at("/v2.1/flavors/1/os-flavor-access", "2.1")},
		"POST /v2.1/flavors/{id}/action": {w("POST", "/v2.1/flavors/1/action", "2.1",
			map[string]any{"addTenantAccess": map[string]any{"tenant": v.projectB}})},
		"POST /v2.1/flavors/{id}/os-extra_specs": {w("POST", "/v2.1/flavors/1/os-extra_specs", "2.1",
			map[string]any{"extra_specs": map[string]any{"trait:CUSTOM_X": "required"}})},
		"PUT /v2.1/flavors/{id}/os-extra_specs/{key}": {w("PUT", "/v2.1/flavors/1/os-extra_specs/resources:VCPU", "2.1",
			map[string]any{"resources:VCPU": "1"})},
		"DELETE /v2.1/flavors/{id}/os-extra_specs/{key}": {w("DELETE", "/v2.1/flavors/1/os-extra_specs/resources:VCPU", "2.1", nil)},
		// B may make groups of its own; it must not see or use A's.
		"POST /v2.1/os-server-groups": {{method: "POST", path: "/v2.1/os-server-groups", mv: "2.1",
			body: map[string]any{"server_group": map[string]any{"name": "b", "policies": []string{"affinity"}}}}},
		"GET /v2.1/os-server-groups":         {at("/v2.1/os-server-groups", ""), at("/v2.1/os-server-groups?all_projects=1", "")},
		"GET /v2.1/os-server-groups/{id}":    {at("/v2.1/os-server-groups/"+v.group, "")},
		"DELETE /v2.1/os-server-groups/{id}": {w("DELETE", "/v2.1/os-server-groups/"+v.group, "", nil)},
		// Host aggregates are an admin's alone.
		"GET /v2.1/os-aggregates":         {at("/v2.1/os-aggregates", "2.41")},
		"POST /v2.1/os-aggregates":        {w("POST", "/v2.1/os-aggregates", "2.1", map[string]any{"aggregate": map[string]any{"name": "evil"}})},
		"GET /v2.1/os-aggregates/{id}":    {at(agg, "2.41")},
		"PUT /v2.1/os-aggregates/{id}":    {w("PUT", agg, "2.1", map[string]any{"aggregate": map[string]any{"name": "evil"}})},
		"DELETE /v2.1/os-aggregates/{id}": {w("DELETE", agg, "2.1", nil)},
		"POST /v2.1/os-aggregates/{id}/action": {
			w("POST", agg+"/action", "2.1", map[string]any{"add_host": map[string]any{"host": "ingot-matrix"}}),
			w("POST", agg+"/action", "2.1", map[string]any{"remove_host": map[string]any{"host": "ingot-matrix"}}),
			w("POST", agg+"/action", "2.1", map[string]any{"set_metadata": map[string]any{"metadata": map[string]any{"k": "evil"}}}),
		},
		// The default quota class sets every project's defaults.
		"GET /v2.1/os-quota-class-sets/{id}": {at("/v2.1/os-quota-class-sets/default", "2.57")},
		"PUT /v2.1/os-quota-class-sets/{id}": {w("PUT", "/v2.1/os-quota-class-sets/default", "2.57",
			map[string]any{"quota_class_set": map[string]any{"instances": 1000}})},
		// Adoption would make A's instances another project's servers.
		"POST /ingot/v1/adopt": {w("POST", "/ingot/v1/adopt", "", map[string]any{"from": "ironic", "project": v.projectB}),
			w("POST", "/ingot/v1/adopt", "", map[string]any{"from": "ironic", "dry_run": true})},
		// Appended to POST /v2.1/servers: building into A's group.
		"POST /v2.1/servers": {w("POST", "/v2.1/servers", "", hint)},
	}
}

// adminOnlyReads are the GET routes A's own member is refused too (owner
// reads skip them).
var adminOnlyReads = []string{"GET /v2.1/os-hypervisors", "GET /v2.1/os-hypervisors/detail", "GET /v2.1/os-hypervisors/statistics",
	"GET /v2.1/os-hypervisors/{id}", "GET /v2.1/os-hypervisors/{id}/uptime", "GET /v2.1/os-hypervisors/{id}/search",
	"GET /v2.1/os-hypervisors/{id}/servers", "GET /v2.1/os-services", "GET /v2.1/os-hosts", "GET /v2.1/os-hosts/{host}",
	"GET /v2.1/os-hosts/{host}/startup", "GET /v2.1/os-hosts/{host}/shutdown", "GET /v2.1/os-hosts/{host}/reboot",
	"GET /v2.1/flavors/{id}/os-flavor-access", "GET /v2.1/os-aggregates", "GET /v2.1/os-aggregates/{id}",
	"GET /v2.1/os-quota-class-sets/{id}"}

// setUpVictimGroup gives A a server group with A's server in it, and the
// admin a host aggregate.
func setUpVictimGroup(t *testing.T, s *stack, v *victim) {
	var g struct {
		ServerGroup struct{ ID string } `json:"server_group"`
	}
	s.must("member-a", "POST", "/v2.1/os-server-groups", map[string]any{"server_group": map[string]any{"name": "group-a",
		"policy": "anti-affinity"}}, http.StatusOK).decode(t, &g)
	v.group = g.ServerGroup.ID
	var a struct {
		Aggregate struct{ ID int } `json:"aggregate"`
	}
	s.must("admin", "POST", "/v2.1/os-aggregates", map[string]any{"aggregate": map[string]any{"name": "agg-admin",
		"availability_zone": "zone-admin"}}, http.StatusOK).decode(t, &a)
	v.aggregate = a.Aggregate.ID
}

// checkVictimAggregate: the attempts left the admin's aggregate as it was.
func checkVictimAggregate(t *testing.T, s *stack, v victim) {
	var a struct {
		Aggregate struct {
			Name     string
			Hosts    []string
			Metadata map[string]string
		} `json:"aggregate"`
	}
	s.must("admin", "GET", fmt.Sprintf("/v2.1/os-aggregates/%d", v.aggregate), nil, http.StatusOK).decode(t, &a)
	if a.Aggregate.Name != "agg-admin" || len(a.Aggregate.Hosts) != 0 || len(a.Aggregate.Metadata) != 1 {
		t.Errorf("the admin's aggregate changed: %+v", a.Aggregate)
	}
}
