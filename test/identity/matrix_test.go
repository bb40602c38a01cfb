package identity

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/api"
	"github.com/ingot-dev/ingot/internal/keystonetest"
)

func ed25519Key(t testing.TB) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var blob []byte
	for _, f := range [][]byte{[]byte("ssh-ed25519"), pub} {
		blob = binary.BigEndian.AppendUint32(blob, uint32(len(f)))
		blob = append(blob, f...)
	}
	return "ssh-ed25519 " + base64.StdEncoding.EncodeToString(blob) + " test@ingot"
}

// victim is what project A owns when the matrix runs.
type victim struct {
	project, projectB       string
	server, request         string
	volume, heldVolume      string
	keypair, keyFingerprint string
	port                    string
	memberA                 string // user id
	group                   string // A's server group (matrix_admin_test.go)
	aggregate               int    // an admin's host aggregate (matrix_admin_test.go)
}

// secrets are strings only project A may see; a 2xx answer to an
// attacker must contain none of them.
func (v victim) secrets() []string {
	return []string{v.server, v.request, v.volume, v.heldVolume, v.keyFingerprint, v.port, v.group, "secret-of-a", "tag-a"}
}

// attempt is one request of the matrix.
type attempt struct {
	method, path string
	mv           string
	body         any
	// write: the request must be refused (non-2xx); a read may answer 2xx
	// as long as it shows none of A's secrets.
	write bool
}

func get(path string) attempt { return attempt{method: "GET", path: path} }

// attacks are, for every guarded route, what project B's users try
// against project A's resources (own is B's project id). A route missing
// here fails TestCrossTenantMatrix: a new route must say how it is attacked.
func attacks(v victim) map[string][]attempt {
	a, b := v.project, v.projectB
	create := func(extra map[string]any) map[string]any {
		s := map[string]any{"name": "intruder", "imageRef": "debian-12", "flavorRef": "1", "networks": "auto"}
		for k, x := range extra {
			s[k] = x
		}
		return map[string]any{"server": s}
	}
	out := map[string][]attempt{
		"POST /v2.1/servers": {
			{method: "POST", path: "/v2.1/servers", body: create(map[string]any{"key_name": v.keypair}), write: true},
			{method: "POST", path: "/v2.1/servers", write: true, body: create(map[string]any{"block_device_mapping_v2": []any{
				map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": v.volume, "boot_index": -1}}})},
		},
		"GET /v2.1/servers":              {get("/v2.1/servers"), get("/v2.1/servers?all_tenants=1"), get("/v2.1/servers?tenant_id=" + a)},
		"GET /v2.1/servers/detail":       {get("/v2.1/servers/detail"), get("/v2.1/servers/detail?all_tenants=1&project_id=" + a)},
		"GET /v2.1/servers/{id}":         {get("/v2.1/servers/" + v.server)},
		"DELETE /v2.1/servers/{id}":      {{method: "DELETE", path: "/v2.1/servers/" + v.server, write: true}},
		"POST /v2.1/servers/{id}/action": serverActions(v.server),
		"POST /v2.1/servers/{id}/remote-consoles": {{method: "POST", path: "/v2.1/servers/" + v.server + "/remote-consoles", mv: "2.8",
			body: map[string]any{"remote_console": map[string]any{"protocol": "serial", "type": "serial"}}, write: true}},
		"PUT /v2.1/servers/{id}":                                {{method: "PUT", path: "/v2.1/servers/" + v.server, body: map[string]any{"server": map[string]any{"name": "pwned"}}, write: true}},
		"POST /v2.1/servers/{id}/metadata":                      {{method: "POST", path: "/v2.1/servers/" + v.server + "/metadata", body: map[string]any{"metadata": map[string]any{"x": "y"}}, write: true}},
		"PUT /v2.1/servers/{id}/metadata":                       {{method: "PUT", path: "/v2.1/servers/" + v.server + "/metadata", body: map[string]any{"metadata": map[string]any{}}, write: true}},
		"GET /v2.1/servers/{id}/metadata/{key}":                 {get("/v2.1/servers/" + v.server + "/metadata/role")},
		"PUT /v2.1/servers/{id}/metadata/{key}":                 {{method: "PUT", path: "/v2.1/servers/" + v.server + "/metadata/role", body: map[string]any{"meta": map[string]any{"role": "x"}}, write: true}},
		"DELETE /v2.1/servers/{id}/metadata/{key}":              {{method: "DELETE", path: "/v2.1/servers/" + v.server + "/metadata/role", write: true}},
		"GET /v2.1/servers/{id}/os-security-groups":             {get("/v2.1/servers/" + v.server + "/os-security-groups")},
		"PUT /v2.1/servers/{id}/tags":                           {{method: "PUT", path: "/v2.1/servers/" + v.server + "/tags", body: map[string]any{"tags": []string{}}, write: true}},
		"DELETE /v2.1/servers/{id}/tags":                        {{method: "DELETE", path: "/v2.1/servers/" + v.server + "/tags", write: true}},
		"GET /v2.1/servers/{id}/tags/{tag}":                     {get("/v2.1/servers/" + v.server + "/tags/tag-a")},
		"PUT /v2.1/servers/{id}/tags/{tag}":                     {{method: "PUT", path: "/v2.1/servers/" + v.server + "/tags/pwned", write: true}},
		"DELETE /v2.1/servers/{id}/tags/{tag}":                  {{method: "DELETE", path: "/v2.1/servers/" + v.server + "/tags/tag-a", write: true}},
		"GET /v2.1/servers/{id}/os-instance-actions":            {get("/v2.1/servers/" + v.server + "/os-instance-actions")},
		"GET /v2.1/servers/{id}/os-instance-actions/{req}":      {get("/v2.1/servers/" + v.server + "/os-instance-actions/" + v.request)},
		"GET /v2.1/servers/{id}/metadata":                       {get("/v2.1/servers/" + v.server + "/metadata")},
		"GET /v2.1/servers/{id}/ips":                            {get("/v2.1/servers/" + v.server + "/ips")},
		"GET /v2.1/servers/{id}/os-interface":                   {get("/v2.1/servers/" + v.server + "/os-interface")},
		"GET /v2.1/servers/{id}/tags":                           {get("/v2.1/servers/" + v.server + "/tags")},
		"GET /v2.1/servers/{id}/os-volume_attachments":          {get("/v2.1/servers/" + v.server + "/os-volume_attachments")},
		"GET /v2.1/servers/{id}/os-volume_attachments/{volume}": {get("/v2.1/servers/" + v.server + "/os-volume_attachments/" + v.heldVolume)},
		"POST /v2.1/servers/{id}/os-volume_attachments": {{method: "POST", path: "/v2.1/servers/" + v.server + "/os-volume_attachments", write: true,
			body: map[string]any{"volumeAttachment": map[string]any{"volumeId": v.volume}}}},
		"DELETE /v2.1/servers/{id}/os-volume_attachments/{volume}": {{method: "DELETE", write: true,
			path: "/v2.1/servers/" + v.server + "/os-volume_attachments/" + v.heldVolume}},
		"PUT /v2.1/servers/{id}/os-volume_attachments/{volume}": {{method: "PUT", write: true,
			path: "/v2.1/servers/" + v.server + "/os-volume_attachments/" + v.heldVolume,
			body: map[string]any{"volumeAttachment": map[string]any{"volumeId": v.volume}}}},
		"GET /v2.1/servers/{id}/os-server-password":    {get("/v2.1/servers/" + v.server + "/os-server-password")},
		"DELETE /v2.1/servers/{id}/os-server-password": {{method: "DELETE", path: "/v2.1/servers/" + v.server + "/os-server-password", write: true}},
		"GET /v2.1/os-availability-zone":               {get("/v2.1/os-availability-zone")},
		"GET /v2.1/os-availability-zone/detail":        {get("/v2.1/os-availability-zone/detail")},
		"GET /v2.1/servers/{id}/ips/{network}":         {get("/v2.1/servers/" + v.server + "/ips/provisioning")},
		"GET /v2.1/extensions":                         {get("/v2.1/extensions")},
		"GET /v2.1/extensions/{alias}":                 {get("/v2.1/extensions/os-consoles")},
		"GET /v2.1/os-migrations":                      {get("/v2.1/os-migrations")},
		"GET /v2.1/servers/{id}/diagnostics":           {get("/v2.1/servers/" + v.server + "/diagnostics")},
		"POST /v2.1/os-server-external-events": {{method: "POST", path: "/v2.1/os-server-external-events", write: true,
			body: map[string]any{"events": []any{map[string]any{"name": "network-changed", "server_uuid": v.server}}}}},
		"GET /v2.1/os-simple-tenant-usage":               {get("/v2.1/os-simple-tenant-usage?detailed=1")},
		"GET /v2.1/os-simple-tenant-usage/{tenant}":      {get("/v2.1/os-simple-tenant-usage/" + a + "?start=2000-01-01T00:00:00")},
		"GET /v2.1/os-instance_usage_audit_log":          {get("/v2.1/os-instance_usage_audit_log")},
		"GET /v2.1/os-instance_usage_audit_log/{before}": {get("/v2.1/os-instance_usage_audit_log/2026-01-01%2000:00:00")},

		// The catalogue is shared: reading it is allowed and shows nothing of A.
		"GET /v2.1/flavors":                           {get("/v2.1/flavors")},
		"GET /v2.1/flavors/detail":                    {get("/v2.1/flavors/detail")},
		"GET /v2.1/flavors/{id}":                      {get("/v2.1/flavors/1")},
		"GET /v2.1/flavors/{id}/os-extra_specs":       {get("/v2.1/flavors/1/os-extra_specs")},
		"GET /v2.1/flavors/{id}/os-extra_specs/{key}": {get("/v2.1/flavors/1/os-extra_specs/resources:VCPU")},
		"GET /v2.1/images":                            {{method: "GET", path: "/v2.1/images", mv: "2.35"}},
		"GET /v2.1/images/{id}":                       {{method: "GET", path: "/v2.1/images/" + imageID, mv: "2.35"}},
		"GET /v2.1/images/detail":                     {{method: "GET", path: "/v2.1/images/detail", mv: "2.35"}},
		// The configured images are read-only to everyone; with Glance, its
		// policy decides (test/glance).
		"DELETE /v2.1/images/{id}":       {{method: "DELETE", path: "/v2.1/images/" + imageID, mv: "2.35", write: true}},
		"GET /v2.1/images/{id}/metadata": {{method: "GET", path: "/v2.1/images/" + imageID + "/metadata", mv: "2.35"}},
		"POST /v2.1/images/{id}/metadata": {{method: "POST", path: "/v2.1/images/" + imageID + "/metadata", mv: "2.35",
			body: map[string]any{"metadata": map[string]any{"x": "y"}}, write: true}},
		"PUT /v2.1/images/{id}/metadata": {{method: "PUT", path: "/v2.1/images/" + imageID + "/metadata", mv: "2.35",
			body: map[string]any{"metadata": map[string]any{}}, write: true}},
		"GET /v2.1/images/{id}/metadata/{key}": {{method: "GET", path: "/v2.1/images/" + imageID + "/metadata/os_distro", mv: "2.35"}},
		"PUT /v2.1/images/{id}/metadata/{key}": {{method: "PUT", path: "/v2.1/images/" + imageID + "/metadata/x", mv: "2.35",
			body: map[string]any{"meta": map[string]any{"x": "y"}}, write: true}},
		"DELETE /v2.1/images/{id}/metadata/{key}":         {{method: "DELETE", path: "/v2.1/images/" + imageID + "/metadata/os_distro", mv: "2.35", write: true}},
		"GET /image/v2/images":                            {get("/image/v2/images")},
		"GET /image/v2/images/{id}":                       {get("/image/v2/images/" + imageID)},
		"GET /v2.1/networks":                              {get("/v2.1/networks")},
		"GET /v2.1/networks/{id}":                         {get("/v2.1/networks/x")},
		"GET /v2.1/v2.0/networks":                         {get("/v2.1/v2.0/networks")},
		"GET /v2.1/v2.0/networks/{id}":                    {get("/v2.1/v2.0/networks/x")},
		"GET /network/v2.0/networks":                      {get("/network/v2.0/networks")},
		"GET /network/v2.0/networks/{id}":                 {get("/network/v2.0/networks/x")},
		"GET /v2.1/os-networks":                           {{method: "GET", path: "/v2.1/os-networks", mv: "2.35"}},
		"GET /v2.1/os-networks/{id}":                      {{method: "GET", path: "/v2.1/os-networks/x", mv: "2.35"}},
		"GET /v2.1/ports/{id}":                            {get("/v2.1/ports/" + v.port)},
		"GET /v2.1/v2.0/ports/{id}":                       {get("/v2.1/v2.0/ports/" + v.port)},
		"GET /network/v2.0/ports/{id}":                    {get("/network/v2.0/ports/" + v.port)},
		"GET /v2.1/ports":                                 {get("/v2.1/ports?device_id=" + v.server), get("/v2.1/ports?id=" + v.port)},
		"GET /v2.1/v2.0/ports":                            {get("/v2.1/v2.0/ports?device_id=" + v.server)},
		"GET /network/v2.0/ports":                         {get("/network/v2.0/ports?device_id=" + v.server), get("/network/v2.0/ports?id=" + v.port)},
		"POST /volume/v3/{project}/volumes":               {{method: "POST", path: "/volume/v3/" + a + "/volumes", body: map[string]any{"volume": map[string]any{"size": 1}}, write: true}},
		"GET /volume/v3/{project}/volumes":                {get("/volume/v3/" + b + "/volumes"), get("/volume/v3/" + a + "/volumes"), get("/volume/v3/" + b + "/volumes?all_tenants=1")},
		"GET /volume/v3/{project}/volumes/detail":         {get("/volume/v3/" + b + "/volumes/detail"), get("/volume/v3/" + a + "/volumes/detail")},
		"GET /volume/v3/{project}/volumes/{id}":           {get("/volume/v3/" + b + "/volumes/" + v.volume), get("/volume/v3/" + a + "/volumes/" + v.heldVolume)},
		"DELETE /volume/v3/{project}/volumes/{id}":        {{method: "DELETE", path: "/volume/v3/" + b + "/volumes/" + v.volume, write: true}, {method: "DELETE", path: "/volume/v3/" + a + "/volumes/" + v.volume, write: true}},
		"GET /ingot/v1/nodes":                             {get("/ingot/v1/nodes")},
		"GET /v2.1/os-keypairs":                           {get("/v2.1/os-keypairs"), get("/v2.1/os-keypairs?user_id=" + v.memberA)},
		"POST /v2.1/os-keypairs":                          {{method: "POST", path: "/v2.1/os-keypairs", write: true, body: map[string]any{"keypair": map[string]any{"name": v.keypair, "user_id": v.memberA, "public_key": "x"}}}},
		"GET /v2.1/os-keypairs/{name}":                    {get("/v2.1/os-keypairs/" + v.keypair), get("/v2.1/os-keypairs/" + v.keypair + "?user_id=" + v.memberA)},
		"DELETE /v2.1/os-keypairs/{name}":                 {{method: "DELETE", path: "/v2.1/os-keypairs/" + v.keypair, write: true}, {method: "DELETE", path: "/v2.1/os-keypairs/" + v.keypair + "?user_id=" + v.memberA, write: true}},
		"GET /v2.1/os-quota-sets/{project}":               {get("/v2.1/os-quota-sets/" + a)},
		"GET /v2.1/os-quota-sets/{project}/detail":        {get("/v2.1/os-quota-sets/" + a + "/detail")},
		"GET /v2.1/os-quota-sets/{project}/defaults":      {get("/v2.1/os-quota-sets/" + b + "/defaults")},
		"PUT /v2.1/os-quota-sets/{project}":               {{method: "PUT", path: "/v2.1/os-quota-sets/" + a, body: map[string]any{"quota_set": map[string]any{"instances": 0}}, write: true}},
		"DELETE /v2.1/os-quota-sets/{project}":            {{method: "DELETE", path: "/v2.1/os-quota-sets/" + a, write: true}},
		"GET /v2.1/limits":                                {get("/v2.1/limits"), get("/v2.1/limits?tenant_id=" + a)},
		"GET /volume/v3/{project}/os-quota-sets/{target}": {get("/volume/v3/" + b + "/os-quota-sets/" + a), get("/volume/v3/" + a + "/os-quota-sets/" + a)},
		"GET /volume/v3/{project}/limits":                 {get("/volume/v3/" + a + "/limits"), get("/volume/v3/" + b + "/limits")},
		"GET /v2.1/quotas/{project}":                      {get("/v2.1/quotas/" + a)},
		"GET /v2.1/v2.0/quotas/{project}":                 {get("/v2.1/v2.0/quotas/" + a)},
		"GET /network/v2.0/quotas/{project}":              {get("/network/v2.0/quotas/" + a)},
	}
	// os-interface attach, show and detach.
	out["POST /v2.1/servers/{id}/os-interface"] = []attempt{{method: "POST", path: "/v2.1/servers/" + v.server + "/os-interface",
		body: map[string]any{"interfaceAttachment": map[string]any{}}, write: true}}
	out["GET /v2.1/servers/{id}/os-interface/{port}"] = []attempt{get("/v2.1/servers/" + v.server + "/os-interface/" + v.port)}
	out["DELETE /v2.1/servers/{id}/os-interface/{port}"] = []attempt{{method: "DELETE", path: "/v2.1/servers/" + v.server + "/os-interface/" + v.port, write: true}}
	for route, more := range adminAttacks(v) {
		out[route] = append(out[route], more...)
	}
	return out
}

// serverActions are every server action project B may try on A's server.
func serverActions(server string) []attempt {
	var out []attempt
	for _, body := range []map[string]any{
		{"forceDelete": nil}, {"reboot": map[string]any{"type": "HARD"}}, {"os-stop": nil}, {"os-start": nil},
		{"rebuild": map[string]any{"imageRef": imageID}}, {"rescue": nil}, {"unrescue": nil},
		{"lock": nil}, {"unlock": nil}, {"os-resetState": map[string]any{"state": "error"}},
	} {
		out = append(out, attempt{method: "POST", path: "/v2.1/servers/" + server + "/action", body: body, write: true})
	}
	return out
}

// publicRoutes answer anyone; a new public route must be added here on
// purpose.
var publicRoutes = []string{"GET /{$}", "GET /v2.1", "GET /v2.1/{$}", "GET /v2", "GET /v2/{$}", "GET /image", "GET /image/{$}",
	"GET /network", "GET /network/{$}", "GET /volume", "GET /volume/{$}", "GET /volume/v3", "GET /volume/v3/{$}",
	"GET /healthz", "GET /readyz", "GET /metrics"}

// setUpVictim makes project A's resources as member-a (and one server of B).
func setUpVictim(t *testing.T, s *stack) victim {
	v := victim{project: s.project("a"), projectB: s.project("b"), keypair: "kp-a", memberA: s.userID("member-a")}
	setUpVictimGroup(t, s, &v)
	var kp struct{ Keypair struct{ Fingerprint string } }
	s.must("member-a", "POST", "/v2.1/os-keypairs", map[string]any{"keypair": map[string]any{"name": v.keypair, "public_key": ed25519Key(t)}}, 201).decode(t, &kp)
	v.keyFingerprint = kp.Keypair.Fingerprint
	var vol struct{ Volume struct{ ID string } }
	s.must("member-a", "POST", "/volume/v3/"+v.project+"/volumes", map[string]any{"volume": map[string]any{"size": 1, "name": "free-a"}}, 202).decode(t, &vol)
	v.volume = vol.Volume.ID
	s.must("member-a", "POST", "/volume/v3/"+v.project+"/volumes", map[string]any{"volume": map[string]any{"size": 1, "name": "held-a"}}, 202).decode(t, &vol)
	v.heldVolume = vol.Volume.ID
	v.server, v.request = s.createServer("member-a", "server-a", map[string]any{"key_name": v.keypair,
		"metadata": map[string]any{"role": "secret-of-a"}, "tags": []string{"tag-a"},
		"block_device_mapping_v2": []any{map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": v.heldVolume, "boot_index": -1}}})
	s.waitActive("member-a", v.server)
	var ports struct{ Ports []struct{ ID string } }
	s.must("member-a", "GET", "/v2.1/ports?device_id="+v.server, nil, 200).decode(t, &ports)
	if len(ports.Ports) != 1 {
		t.Fatalf("server-a has %d ports", len(ports.Ports))
	}
	v.port = ports.Ports[0].ID
	return v
}

// TestCrossTenantMatrix: project B's member and reader try every guarded
// route against project A's server, volumes, keypair, port, actions and
// quotas: nothing of A is shown and nothing of A changes. A route the
// table does not cover, or a public route not on the list, fails.
func TestCrossTenantMatrix(t *testing.T) {
	t.Run("keystone", func(t *testing.T) { runMatrix(t, startStack(t, keystonetest.Start(t), nil)) })
	t.Run("noauth", func(t *testing.T) { runMatrix(t, startStack(t, nil, nil)) })
}

func runMatrix(t *testing.T, s *stack) {
	v := setUpVictim(t, s)
	table := attacks(v)
	var guarded, public []string
	for _, r := range api.Routes(s.app.Handler) {
		if r.Public {
			public = append(public, r.Pattern)
			continue
		}
		guarded = append(guarded, r.Pattern)
		if _, ok := table[r.Pattern]; !ok {
			t.Errorf("route %q has no row in the cross-tenant matrix (attacks): say how project B tries it", r.Pattern)
		}
	}
	sort.Strings(public)
	want := append([]string(nil), publicRoutes...)
	sort.Strings(want)
	if strings.Join(public, ",") != strings.Join(want, ",") {
		t.Errorf("public routes %v, want %v", public, want)
	}
	attempts := 0
	for _, user := range []string{"member-b", "reader-b"} {
		for _, pattern := range guarded {
			for _, at := range table[pattern] {
				attempts++
				mv := at.mv
				if mv == "" {
					mv = "2.90"
				}
				r := s.do(user, at.method, at.path, mv, at.body)
				switch {
				case r.status >= 500:
					t.Errorf("%s %s %s as %s: %d %s", pattern, at.method, at.path, user, r.status, r.body)
				case r.status < 300 && at.write:
					t.Errorf("%s %s as %s changed something of A: %d %s", at.method, at.path, user, r.status, r.body)
				case r.status < 300:
					if sec := contains(r.body, v.secrets()); sec != "" {
						t.Errorf("%s %s as %s shows A's %s: %s", at.method, at.path, user, sec, r.body)
					}
				}
			}
		}
	}
	t.Logf("cross-tenant matrix: %d guarded routes, %d public; %d attempts by project B's member and reader, all refused",
		len(guarded), len(public), attempts)
	// A's resources are untouched.
	s.waitActive("member-a", v.server)
	s.must("member-a", "GET", "/v2.1/os-keypairs/"+v.keypair, nil, 200)
	s.must("member-a", "GET", "/volume/v3/"+v.project+"/volumes/"+v.volume, nil, 200)
	var q struct {
		QuotaSet map[string]any `json:"quota_set"`
	}
	s.must("member-a", "GET", "/v2.1/os-quota-sets/"+v.project, nil, 200).decode(t, &q)
	if q.QuotaSet["instances"] != -1.0 {
		t.Errorf("A's quota changed: %v", q.QuotaSet)
	}
	checkVictimAggregate(t, s, v)
	ownerReads(t, s, v, table, guarded)
	readerWrites(t, s, v)
	memberAdminRoutes(t, s, v)
	adminSeesAll(t, s, v)
}

// ownerReads: the same reads by A's member succeed (the refusals above are
// not an artifact of broken routes), except the admin-only ones.
func ownerReads(t *testing.T, s *stack, v victim, table map[string][]attempt, guarded []string) {
	adminOnly := map[string]bool{"GET /ingot/v1/nodes": true, "GET /v2.1/os-availability-zone/detail": true,
		"GET /v2.1/os-migrations": true, "GET /v2.1/os-simple-tenant-usage": true,
		"GET /v2.1/os-instance_usage_audit_log": true, "GET /v2.1/os-instance_usage_audit_log/{before}": true,
		"GET /v2.1/servers/{id}/diagnostics": true}
	for _, r := range adminOnlyReads {
		adminOnly[r] = true
	}
	swap := strings.NewReplacer("/volume/v3/"+v.projectB+"/", "/volume/v3/"+v.project+"/", "/os-quota-sets/"+v.projectB, "/os-quota-sets/"+v.project)
	n := 0
	for _, pattern := range guarded {
		if !strings.HasPrefix(pattern, "GET ") || adminOnly[pattern] {
			continue
		}
		at := table[pattern][0]
		path := swap.Replace(at.path)
		if strings.Contains(path, "all_tenants") || strings.Contains(path, "tenant_id=") || strings.Contains(path, "/v2.1/networks/x") ||
			strings.Contains(path, "/v2.0/networks/x") || strings.Contains(path, "/os-networks/x") {
			continue
		}
		n++
		mv := "2.90"
		if at.mv != "" {
			mv = at.mv // a proxy gone at 2.90 (os-networks)
		}
		if r := s.do("member-a", "GET", path, mv, nil); r.status != 200 && r.status != http.StatusNoContent {
			t.Errorf("owner read %s: %d %s", path, r.status, r.body)
		}
	}
	t.Logf("owner reads: %d routes answer project A's member", n)
}

// readerWrites: A's reader may read, never write.
func readerWrites(t *testing.T, s *stack, v victim) {
	for _, at := range []attempt{
		{method: "POST", path: "/v2.1/servers", body: map[string]any{"server": map[string]any{"name": "r", "imageRef": "debian-12", "flavorRef": "1", "networks": "auto"}}},
		{method: "DELETE", path: "/v2.1/servers/" + v.server},
		{method: "POST", path: "/v2.1/servers/" + v.server + "/action", body: map[string]any{"forceDelete": nil}},
		{method: "POST", path: "/v2.1/servers/" + v.server + "/action", body: map[string]any{"reboot": map[string]any{"type": "SOFT"}}},
		{method: "POST", path: "/v2.1/servers/" + v.server + "/action", body: map[string]any{"lock": nil}},
		{method: "PUT", path: "/v2.1/servers/" + v.server, body: map[string]any{"server": map[string]any{"name": "r"}}},
		{method: "PUT", path: "/v2.1/servers/" + v.server + "/metadata/role", body: map[string]any{"meta": map[string]any{"role": "r"}}},
		{method: "PUT", path: "/v2.1/servers/" + v.server + "/tags/r"},
		{method: "POST", path: "/volume/v3/" + v.project + "/volumes", body: map[string]any{"volume": map[string]any{"size": 1}}},
		{method: "DELETE", path: "/volume/v3/" + v.project + "/volumes/" + v.volume},
	} {
		if r := s.do("reader-a", at.method, at.path, "2.90", at.body); r.status != http.StatusForbidden {
			t.Errorf("reader %s %s: %d %s, want 403", at.method, at.path, r.status, r.body)
		}
	}
	s.must("reader-a", "GET", "/v2.1/servers/"+v.server, nil, 200)
}

// memberAdminRoutes: a member gets 403 on the admin routes.
func memberAdminRoutes(t *testing.T, s *stack, v victim) {
	for _, at := range []attempt{
		get("/ingot/v1/nodes"), get("/v2.1/servers/detail?all_tenants=1"), get("/v2.1/servers?all_tenants=true"),
		get("/v2.1/os-availability-zone/detail"), get("/v2.1/limits?tenant_id=" + v.projectB),
		{method: "PUT", path: "/v2.1/os-quota-sets/" + v.project, body: map[string]any{"quota_set": map[string]any{"instances": 50}}},
		{method: "DELETE", path: "/v2.1/os-quota-sets/" + v.project},
		get("/v2.1/os-keypairs?user_id=" + s.userID("reader-a")),
		get("/v2.1/os-migrations"), get("/v2.1/os-simple-tenant-usage"), get("/v2.1/os-simple-tenant-usage/" + v.projectB),
		get("/v2.1/os-instance_usage_audit_log"), get("/v2.1/os-instance_usage_audit_log/2026-01-01%2000:00:00"),
		get("/v2.1/servers/" + v.server + "/diagnostics"),
		{method: "POST", path: "/v2.1/os-server-external-events", body: map[string]any{"events": []any{map[string]any{"name": "network-changed", "server_uuid": v.server}}}},
		{method: "POST", path: "/v2.1/servers/" + v.server + "/action", body: map[string]any{"os-resetState": map[string]any{"state": "error"}}},
		{method: "POST", path: "/ingot/v1/adopt", body: map[string]any{"from": "ironic", "dry_run": true}},
	} {
		if r := s.do("member-a", at.method, at.path, "2.90", at.body); r.status != http.StatusForbidden {
			t.Errorf("member %s %s: %d %s, want 403", at.method, at.path, r.status, r.body)
		}
	}
	// OS-EXT-SRV-ATTR is for admins: not in a member's view.
	r := s.must("member-a", "GET", "/v2.1/servers/"+v.server, nil, 200)
	if strings.Contains(string(r.body), "hypervisor_hostname") || strings.Contains(string(r.body), "OS-EXT-SRV-ATTR:user_data") {
		t.Errorf("member sees extended attributes: %s", r.body)
	}
}

// adminSeesAll: all_tenants=1 lists both projects' servers; by id an
// admin sees A's server with its node.
func adminSeesAll(t *testing.T, s *stack, v victim) {
	idB, _ := s.createServer("member-b", "server-b", nil)
	var list struct {
		Servers []struct {
			ID       string `json:"id"`
			TenantID string `json:"tenant_id"`
		} `json:"servers"`
	}
	s.must("admin", "GET", "/v2.1/servers/detail?all_tenants=1", nil, 200).decode(t, &list)
	seen := map[string]string{}
	for _, sv := range list.Servers {
		seen[sv.ID] = sv.TenantID
	}
	if seen[v.server] != v.project || seen[idB] != v.projectB {
		t.Errorf("admin all_tenants sees %v; want %s in %s and %s in %s", seen, v.server, v.project, idB, v.projectB)
	}
	s.must("admin", "GET", "/v2.1/servers/detail?all_tenants=1&project_id="+v.projectB, nil, 200).decode(t, &list)
	if len(list.Servers) != 1 || list.Servers[0].ID != idB {
		t.Errorf("admin all_tenants&project_id=B lists %+v", list.Servers)
	}
	s.must("admin", "GET", "/v2.1/servers/detail", nil, 200).decode(t, &list)
	if len(list.Servers) != 0 {
		t.Errorf("admin without all_tenants lists other projects' servers: %+v", list.Servers)
	}
	r := s.must("admin", "GET", "/v2.1/servers/"+v.server, nil, 200)
	if !strings.Contains(string(r.body), "OS-EXT-SRV-ATTR:hypervisor_hostname") {
		t.Errorf("admin does not see extended attributes: %s", r.body)
	}
	s.must("admin", "GET", "/ingot/v1/nodes", nil, 200)
}
