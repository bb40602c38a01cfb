package keystonetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ingot-dev/ingot/internal/testproc"
)

// people is the template's content (see the package documentation).
var people = []struct {
	name, project string
	roles         []string
}{
	{"member-a", "a", []string{"member"}},
	{"reader-a", "a", []string{"reader"}},
	{"member-b", "b", []string{"member"}},
	{"reader-b", "b", []string{"reader"}},
	{"ingot", "service", []string{"admin", "service"}},
}

var (
	tmplOnce sync.Once
	tmplPath string
	tmplErr  error
)

// dbTemplate returns the directory of a bootstrapped, populated Keystone
// database (keystone.db, fernet/, cred/, manifest.json), built once per
// machine and Keystone version in the system temp dir; it is built under
// a temporary name and renamed, so concurrent test binaries never see half
// of one.
func dbTemplate() (string, error) {
	tmplOnce.Do(func() { tmplPath, tmplErr = makeTemplate() })
	return tmplPath, tmplErr
}

func makeTemplate() (string, error) {
	root := filepath.Join(os.TempDir(), "ingot-keystonetest")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(root, "template-"+keystoneVersion())
	if _, err := os.Stat(filepath.Join(path, "manifest.json")); err == nil {
		return path, nil
	}
	work, err := os.MkdirTemp(root, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	if err := buildTemplate(work); err != nil {
		return "", err
	}
	if err := os.Rename(work, path); err != nil {
		if _, serr := os.Stat(filepath.Join(path, "manifest.json")); serr == nil {
			return path, nil // another binary won the race
		}
		return "", err
	}
	return path, nil
}

func buildTemplate(dir string) error {
	if err := writeConf(dir, 3600); err != nil {
		return err
	}
	if err := manage(dir, "db_sync"); err != nil {
		return err
	}
	// WAL persists in the file: without it, a read left open by one request
	// blocked the next write.
	if err := sqliteExec(filepath.Join(dir, "keystone.db"), "PRAGMA journal_mode=WAL"); err != nil {
		return err
	}
	for _, d := range []string{"fernet", "cred"} {
		if err := writeKeys(filepath.Join(dir, d)); err != nil {
			return err
		}
	}
	const placeholder = "http://127.0.0.1:1/v3" // moved to the real port at each start
	if err := manage(dir, "bootstrap", "--bootstrap-password", Password, "--bootstrap-admin-url", placeholder,
		"--bootstrap-public-url", placeholder, "--bootstrap-internal-url", placeholder,
		"--bootstrap-region-id", "RegionOne"); err != nil {
		return err
	}
	p, err := start(dir, nil)
	if err != nil {
		return err
	}
	defer p.stop()
	users, err := populate(p.url)
	if err != nil {
		return err
	}
	p.stop()
	if err := sqliteExec(filepath.Join(dir, "keystone.db"), "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(users, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "manifest.json"), raw, 0o600)
}

// populate makes the projects, users and role assignments through the API.
func populate(url string) (map[string]User, error) {
	hc := &http.Client{Timeout: 30 * time.Second}
	admin, err := issue(hc, url, "admin", "admin")
	if err != nil {
		return nil, err
	}
	var roles struct {
		Roles []struct{ ID, Name string } `json:"roles"`
	}
	if err := testproc.Call(hc, admin, http.MethodGet, url+"/roles", nil, &roles); err != nil {
		return nil, err
	}
	roleID := map[string]string{}
	for _, r := range roles.Roles {
		roleID[r.Name] = r.ID
	}
	for _, want := range []string{"member", "reader", "service"} {
		if roleID[want] != "" {
			continue
		}
		var out struct {
			Role struct{ ID string } `json:"role"`
		}
		if err := testproc.Call(hc, admin, http.MethodPost, url+"/roles", map[string]any{"role": map[string]string{"name": want}}, &out); err != nil {
			return nil, err
		}
		roleID[want] = out.Role.ID
	}
	var projects struct {
		Projects []struct{ ID, Name string } `json:"projects"`
	}
	if err := testproc.Call(hc, admin, http.MethodGet, url+"/projects?name=admin", nil, &projects); err != nil || len(projects.Projects) != 1 {
		return nil, fmt.Errorf("admin project: %v", err)
	}
	projectID := map[string]string{"admin": projects.Projects[0].ID}
	for _, name := range []string{"a", "b", "service"} {
		var out struct {
			Project struct{ ID string } `json:"project"`
		}
		if err := testproc.Call(hc, admin, http.MethodPost, url+"/projects", map[string]any{"project": map[string]any{
			"name": name, "domain_id": "default", "enabled": true}}, &out); err != nil {
			return nil, err
		}
		projectID[name] = out.Project.ID
	}
	var me struct {
		Users []struct{ ID string } `json:"users"`
	}
	if err := testproc.Call(hc, admin, http.MethodGet, url+"/users?name=admin", nil, &me); err != nil || len(me.Users) != 1 {
		return nil, fmt.Errorf("admin user: %v", err)
	}
	users := map[string]User{"admin": {Name: "admin", ID: me.Users[0].ID, ProjectName: "admin",
		ProjectID: projectID["admin"], Roles: []string{"admin"}}}
	for _, p := range people {
		var out struct {
			User struct{ ID string } `json:"user"`
		}
		if err := testproc.Call(hc, admin, http.MethodPost, url+"/users", map[string]any{"user": map[string]any{
			"name": p.name, "domain_id": "default", "password": Password, "enabled": true,
			"default_project_id": projectID[p.project]}}, &out); err != nil {
			return nil, err
		}
		for _, r := range p.roles {
			if err := testproc.Call(hc, admin, http.MethodPut, fmt.Sprintf("%s/projects/%s/users/%s/roles/%s",
				url, projectID[p.project], out.User.ID, roleID[r]), nil, nil); err != nil {
				return nil, err
			}
		}
		users[p.name] = User{Name: p.name, ID: out.User.ID, ProjectName: p.project, ProjectID: projectID[p.project], Roles: p.roles}
	}
	return users, nil
}

// startFrom copies the template into dir, points the identity endpoints
// at the port it gets, and starts Keystone there.
func startFrom(dir, tmpl string, expiration int) (*Env, error) {
	if err := copyDir(tmpl, dir); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoManifest, err)
	}
	e := &Env{hc: &http.Client{Timeout: 30 * time.Second}}
	if err := json.Unmarshal(raw, &e.Users); err != nil {
		return nil, err
	}
	if err := writeConf(dir, expiration); err != nil {
		return nil, err
	}
	db := filepath.Join(dir, "keystone.db")
	p, err := start(dir, func(url string) error {
		// The catalog's identity endpoints name the port this start gets.
		return sqliteExec(db, "UPDATE endpoint SET url = '"+url+"' WHERE url LIKE 'http://127.0.0.1:%/v3'")
	})
	if err != nil {
		return nil, err
	}
	e.proc, e.URL = p, p.url
	return e, nil
}

// keystoneVersion names the installed Keystone by its package's egg-info
// directory and its modification time (a reinstall makes a new template).
func keystoneVersion() string {
	matches, _ := filepath.Glob("/usr/lib/python3/dist-packages/keystone-*-info")
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil {
			v := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "keystone-"), ".egg-info"), ".dist-info")
			return fmt.Sprintf("%s-%d", v, st.ModTime().Unix())
		}
	}
	return "unknown"
}
