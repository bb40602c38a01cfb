// Package keystonetest starts a real Keystone for tests: Debian's Keystone
// 22 (keystone, python3-keystone) served by uwsgi with ONE single-threaded
// worker on a free loopback port, SQLite in WAL mode, Fernet tokens. Two
// worker processes or threads break it (SQLite objects shared across
// threads: POST /v3/endpoints answered 500 "database is locked").
//
// Every Env has the same people, made once per machine into a cached
// template database (db_sync, bootstrap and the API calls take about 25 s;
// a copy takes nothing):
//
//	project  user       roles
//	admin    admin      admin (implies member and reader)
//	a        member-a   member (implies reader)
//	a        reader-a   reader
//	b        member-b   member
//	b        reader-b   reader
//	service  ingot      admin, service (validates tokens; talks to Ironic)
//
// The one rule of the repository's tests (README): skipped when Keystone or
// uwsgi is missing, unless INGOT_TEST_IRONIC=1 (as .ci/run sets it): then a
// missing or broken Keystone fails the test. .ci/install-keystone.sh
// installs the packages.
package keystonetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/testproc"
)

// EnvVar makes a missing Keystone a failure instead of a skip: the same
// variable as a missing real Ironic or openstack CLI (ironictest.EnvVar).
const EnvVar = "INGOT_TEST_IRONIC"

// Password of every user of the template (tests only).
const Password = "ingot-test-secret"

// Paths of Debian's Keystone and uwsgi.
const (
	manageBin = "/usr/bin/keystone-manage"
	wsgiFile  = "/usr/bin/keystone-wsgi-public"
	uwsgiBin  = "/usr/bin/uwsgi"
	pluginSO  = "/usr/lib/uwsgi/plugins/python3_plugin.so"
)

// Wanted reports whether INGOT_TEST_IRONIC asks for every real dependency.
func Wanted() bool {
	v := os.Getenv(EnvVar)
	return v == "1" || v == "true" || v == "yes"
}

// User is one account of the template.
type User struct {
	Name        string
	ID          string
	ProjectName string
	ProjectID   string
	Roles       []string
}

// Env is one running Keystone.
type Env struct {
	// URL is the v3 root, e.g. http://127.0.0.1:40123/v3.
	URL string
	// Users by name: admin, member-a, reader-a, member-b, reader-b, ingot.
	Users map[string]User
	// SetupTime is how long this Env took to start (the template's build
	// included when this Env made it).
	SetupTime time.Duration

	proc *proc
	hc   *http.Client
}

// Options changes a started Keystone.
type Options struct {
	// TokenExpiration is [token] expiration (default one hour).
	TokenExpiration time.Duration
}

// Start starts a Keystone for the test and stops it when the test ends.
func Start(t testing.TB) *Env {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start with options.
func StartWith(t testing.TB, o Options) *Env {
	t.Helper()
	for _, p := range []string{manageBin, wsgiFile, uwsgiBin, pluginSO} {
		if _, err := os.Stat(p); err != nil {
			if Wanted() {
				t.Fatalf("keystonetest: %s=1 but %s is missing (run .ci/install-keystone.sh)", EnvVar, p)
			}
			t.Skipf("Keystone not installed (%s missing; run .ci/install-keystone.sh, or set %s=1 to make this a failure)", p, EnvVar)
		}
	}
	begin := time.Now()
	tmpl, err := dbTemplate()
	if err != nil {
		t.Fatalf("keystonetest: template: %v", err)
	}
	exp := int(o.TokenExpiration / time.Second)
	if exp <= 0 {
		exp = 3600
	}
	e, err := startFrom(t.TempDir(), tmpl, exp)
	if e != nil && e.proc != nil {
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("keystonetest: last lines of %s:\n%s", e.proc.log, testproc.Tail(e.proc.log, 20))
			}
			e.proc.stop()
		})
	}
	if err != nil {
		t.Fatalf("keystonetest: start: %v", err)
	}
	e.SetupTime = time.Since(begin)
	return e
}

// Token issues a project-scoped token for user (password auth).
func (e *Env) Token(t testing.TB, user string) string {
	t.Helper()
	tok, err := issue(e.hc, e.URL, user, e.Users[user].ProjectName)
	if err != nil {
		t.Fatalf("keystonetest: token of %s: %v", user, err)
	}
	return tok
}

// Revoke revokes a token (DELETE /v3/auth/tokens with an admin token).
func (e *Env) Revoke(t testing.TB, token string) {
	t.Helper()
	admin := e.Token(t, "admin")
	req, _ := http.NewRequest(http.MethodDelete, e.URL+"/auth/tokens", nil)
	req.Header.Set("X-Auth-Token", admin)
	req.Header.Set("X-Subject-Token", token)
	resp, err := e.hc.Do(req)
	if err != nil {
		t.Fatalf("keystonetest: revoke: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("keystonetest: revoke: %s", resp.Status)
	}
}

// Validate asks Keystone directly whether token is valid (as the admin).
func (e *Env) Validate(t testing.TB, token string) bool {
	t.Helper()
	admin := e.Token(t, "admin")
	req, _ := http.NewRequest(http.MethodGet, e.URL+"/auth/tokens", nil)
	req.Header.Set("X-Auth-Token", admin)
	req.Header.Set("X-Subject-Token", token)
	resp, err := e.hc.Do(req)
	if err != nil {
		t.Fatalf("keystonetest: validate: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// RegisterService adds a service of type typ to the catalog with public,
// internal and admin endpoints at url in RegionOne (as an operator does
// with `openstack service create` and `openstack endpoint create`).
func (e *Env) RegisterService(t testing.TB, typ, name, url string) {
	t.Helper()
	e.RegisterServiceIn(t, typ, name, url, "RegionOne")
}

// RegisterServiceIn is RegisterService in region (created when new): a
// second endpoint of a type that only a client configured for region
// finds — a service reached through a fault proxy by ingot alone.
func (e *Env) RegisterServiceIn(t testing.TB, typ, name, url, region string) {
	t.Helper()
	admin := e.Token(t, "admin")
	if region != "RegionOne" {
		err := testproc.Call(e.hc, admin, http.MethodPost, e.URL+"/regions", map[string]any{"region": map[string]any{"id": region}}, nil)
		if err != nil && !strings.Contains(err.Error(), "409") {
			t.Fatalf("keystonetest: region %s: %v", region, err)
		}
	}
	var svc struct {
		Service struct{ ID string } `json:"service"`
	}
	if err := testproc.Call(e.hc, admin, http.MethodPost, e.URL+"/services",
		map[string]any{"service": map[string]any{"type": typ, "name": name, "enabled": true}}, &svc); err != nil {
		t.Fatalf("keystonetest: service %s: %v", typ, err)
	}
	for _, iface := range []string{"public", "internal", "admin"} {
		if err := testproc.Call(e.hc, admin, http.MethodPost, e.URL+"/endpoints", map[string]any{"endpoint": map[string]any{
			"service_id": svc.Service.ID, "interface": iface, "url": url, "region_id": region, "enabled": true}}, nil); err != nil {
			t.Fatalf("keystonetest: endpoint %s %s: %v", typ, iface, err)
		}
	}
}

// issue gets a project-scoped token by password.
func issue(hc *http.Client, url, user, project string) (string, error) {
	body := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"name": user, "domain": map[string]string{"name": "Default"}, "password": Password}}},
		"scope": map[string]any{"project": map[string]any{"name": project, "domain": map[string]string{"name": "Default"}}},
	}}
	raw, _ := json.Marshal(body)
	resp, err := hc.Post(url+"/auth/tokens", "application/json", bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("POST /v3/auth/tokens as %s: %s %s", user, resp.Status, out)
	}
	return resp.Header.Get("X-Subject-Token"), nil
}

// AddUser makes a user in project (created when missing) with roles (which
// must exist: admin, member, reader, service), password Password, and adds
// it to Users. Tempest's pre-provisioned accounts are made this way.
func (e *Env) AddUser(t testing.TB, name, project string, roles ...string) User {
	t.Helper()
	u, err := e.addUser(name, project, roles)
	if err != nil {
		t.Fatalf("keystonetest: add user %s: %v", name, err)
	}
	e.Users[name] = u
	return u
}

func (e *Env) addUser(name, project string, roles []string) (User, error) {
	admin, err := issue(e.hc, e.URL, "admin", "admin")
	if err != nil {
		return User{}, err
	}
	var rl struct {
		Roles []struct{ ID, Name string } `json:"roles"`
	}
	if err := testproc.Call(e.hc, admin, http.MethodGet, e.URL+"/roles", nil, &rl); err != nil {
		return User{}, err
	}
	roleID := map[string]string{}
	for _, r := range rl.Roles {
		roleID[r.Name] = r.ID
	}
	var found struct {
		Projects []struct{ ID string } `json:"projects"`
	}
	if err := testproc.Call(e.hc, admin, http.MethodGet, e.URL+"/projects?name="+project, nil, &found); err != nil {
		return User{}, err
	}
	var projectID string
	if len(found.Projects) == 1 {
		projectID = found.Projects[0].ID
	} else {
		var out struct {
			Project struct{ ID string } `json:"project"`
		}
		if err := testproc.Call(e.hc, admin, http.MethodPost, e.URL+"/projects", map[string]any{"project": map[string]any{
			"name": project, "domain_id": "default", "enabled": true}}, &out); err != nil {
			return User{}, err
		}
		projectID = out.Project.ID
	}
	var out struct {
		User struct{ ID string } `json:"user"`
	}
	if err := testproc.Call(e.hc, admin, http.MethodPost, e.URL+"/users", map[string]any{"user": map[string]any{
		"name": name, "domain_id": "default", "password": Password, "enabled": true,
		"default_project_id": projectID}}, &out); err != nil {
		return User{}, err
	}
	for _, r := range roles {
		if roleID[r] == "" {
			return User{}, fmt.Errorf("no role %q in Keystone", r)
		}
		if err := testproc.Call(e.hc, admin, http.MethodPut, fmt.Sprintf("%s/projects/%s/users/%s/roles/%s",
			e.URL, projectID, out.User.ID, roleID[r]), nil, nil); err != nil {
			return User{}, err
		}
	}
	return User{Name: name, ID: out.User.ID, ProjectName: project, ProjectID: projectID, Roles: roles}, nil
}
