package upgrade

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/pgtest"
	"github.com/ingot-dev/ingot/internal/poll"
	"github.com/ingot-dev/ingot/internal/testproc"
)

func TestMain(m *testing.M) { os.Exit(ingottest.Main(m)) }

var (
	simRe = regexp.MustCompile(`ironic simulator listening on (http://\S+) `)
	hc    = &http.Client{Timeout: 10 * time.Second}
)

// TestUpgradeKeepsEveryRecord: a database the previous release
// (ingottest.PreviousRelease) wrote — servers active, stopped and deleted,
// with metadata, tags, a key pair and a server group, a flavor with extra
// specs, their actions — is refused by this release's serve while its
// schema is older, migrated by `ingot db migrate`, and then served with
// every record as the previous release showed it; the servers go on (start
// a stopped one, delete one, create one). On SQLite and on PostgreSQL.
func TestUpgradeKeepsEveryRecord(t *testing.T) {
	old := ingottest.BinaryOf(t, ingottest.PreviousRelease)
	cur := ingottest.Binary(t)
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			dsn := filepath.Join(t.TempDir(), "ingot.db")
			if db == "postgres" {
				dsn = pgtest.DSN(t)
			}
			sim := ingottest.Start(t, cur, ingottest.Options{}, "sim", "--nodes", "12", "--listen", "127.0.0.1:0",
				"--deploy-time", "300ms", "--undeploy-time", "200ms", "--vif-mode", "store", "--ports", "1", "--seed", "1")
			cfg := writeConfig(t, dsn, sim.WaitLog(simRe, 30*time.Second))

			a := &api{t: t, p: ingottest.Start(t, old, ingottest.Options{}, "serve", "--config", cfg, "--listen", "127.0.0.1:0").Serving()}
			ids := a.populate()
			before := a.snapshot(ids)
			a.p.Stop()

			pending := exec.Command(cur, "db", "migrate", "--check", "--config", cfg).Run() != nil
			if pending {
				refused := ingottest.Start(t, cur, ingottest.Options{}, "serve", "--config", cfg, "--listen", "127.0.0.1:0")
				if !refused.Exited(time.Minute) || refused.ExitCode() == 0 || !strings.Contains(refused.Output(), "run ingot db migrate") {
					t.Fatalf("serve on the older schema without --migrate: %s\n%s", "not refused", refused.Tail(20))
				}
			}
			if out, err := exec.Command(cur, "db", "migrate", "--config", cfg).CombinedOutput(); err != nil {
				t.Fatalf("db migrate: %v\n%s", err, out)
			}
			a.p = ingottest.Start(t, cur, ingottest.Options{}, "serve", "--config", cfg, "--listen", "127.0.0.1:0").Serving()
			after := a.snapshot(ids)
			for k, was := range before {
				if after[k] != was {
					t.Errorf("%s changed by the upgrade:\nbefore %s\nafter  %s", k, was, after[k])
				}
			}
			if len(after) != len(before) || t.Failed() {
				t.Fatalf("%d records before the upgrade, %d after", len(before), len(after))
			}
			a.goOn(ids)
			t.Logf("%s: %d servers written by %s read back unchanged (migrations were pending: %v); start, delete and create work after",
				db, len(ids.active)+len(ids.stopped)+len(ids.deleted), ingottest.PreviousRelease.Tag, pending)
		})
	}
}

func writeConfig(t *testing.T, dsn, ironic string) string {
	path := filepath.Join(t.TempDir(), "ingot.yaml")
	yaml := fmt.Sprintf(`database: %s
poll_interval: 200ms
build_timeout: 10m
ironic: {url: %s, timeout: 10s}
flavors: [{name: bm, resource_class: baremetal, vcpus: 8, ram_mb: 16384, disk_gb: 100}]
images: [{name: debian-12, url: "http://images.example/debian-12.qcow2"}]
networks: [{name: provisioning, cidr: 10.0.0.0/22}]
`, dsn, ironic)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// api calls one serving ingot (noauth: the admin of project "admin").
type api struct {
	t *testing.T
	p *ingottest.Proc
}

func (a *api) call(method, path, mv string, body, out any) {
	a.t.Helper()
	if err := testproc.CallWith(hc, "", method, a.p.API+path, body, out,
		map[string]string{"X-OpenStack-Nova-API-Version": mv}); err != nil {
		a.t.Fatal(err)
	}
}

// servers are the test's servers by role.
type servers struct{ active, stopped, deleted []string }

// populate writes the records the upgrade must keep.
func (a *api) populate() servers {
	a.t.Helper()
	a.call("POST", "/v2.1/os-keypairs", "2.1", map[string]any{"keypair": map[string]any{"name": "k1"}}, nil)
	a.call("POST", "/v2.1/flavors", "2.55", map[string]any{"flavor": map[string]any{"name": "bm.big", "ram": 65536,
		"vcpus": 32, "disk": 800, "description": "kept"}}, nil)
	var fl struct {
		Flavors []struct{ ID, Name string } `json:"flavors"`
	}
	a.call("GET", "/v2.1/flavors", "2.1", nil, &fl)
	for _, f := range fl.Flavors {
		if f.Name == "bm.big" {
			a.call("POST", "/v2.1/flavors/"+f.ID+"/os-extra_specs", "2.1",
				map[string]any{"extra_specs": map[string]string{"resources:CUSTOM_BAREMETAL": "1"}}, nil)
		}
	}
	var g struct {
		Group struct{ ID string } `json:"server_group"`
	}
	a.call("POST", "/v2.1/os-server-groups", "2.64", map[string]any{"server_group": map[string]any{"name": "g",
		"policy": "anti-affinity"}}, &g)
	var img struct {
		Images []struct{ ID string } `json:"images"`
	}
	a.call("GET", "/v2.1/images", "2.1", nil, &img)
	var nets struct {
		Networks []struct{ ID string } `json:"networks"`
	}
	a.call("GET", "/v2.1/os-networks", "2.1", nil, &nets)
	var all []string
	for i := range 5 {
		var out struct {
			Server struct{ ID string } `json:"server"`
		}
		body := map[string]any{"server": map[string]any{"name": fmt.Sprintf("s%d", i), "flavorRef": "bm",
			"imageRef": img.Images[0].ID, "key_name": "k1", "networks": []map[string]string{{"uuid": nets.Networks[0].ID}},
			"metadata": map[string]string{"role": fmt.Sprint(i)}, "tags": []string{"t" + fmt.Sprint(i)}},
			"os:scheduler_hints": map[string]string{"group": g.Group.ID}}
		a.call("POST", "/v2.1/servers", "2.52", body, &out)
		all = append(all, out.Server.ID)
	}
	a.waitStatus(all, "ACTIVE")
	s := servers{active: all[:3], stopped: all[3:4], deleted: all[4:]}
	a.call("POST", "/v2.1/servers/"+s.stopped[0]+"/action", "2.1", map[string]any{"os-stop": nil}, nil)
	a.call("DELETE", "/v2.1/servers/"+s.deleted[0], "2.1", nil, nil)
	a.waitStatus(s.stopped, "SHUTOFF")
	a.waitGone(s.deleted[0])
	return s
}

func (a *api) status(id string) (string, int) {
	a.t.Helper()
	var out struct {
		Server struct{ Status string } `json:"server"`
	}
	resp, err := hc.Get(a.p.API + "/v2.1/servers/" + id)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		a.t.Fatal(err)
	}
	return out.Server.Status, resp.StatusCode
}

func (a *api) waitStatus(ids []string, want string) {
	a.t.Helper()
	poll.Until(a.t, 2*time.Minute, fmt.Sprintf("%d servers %s", len(ids), want), func() (bool, string) {
		for _, id := range ids {
			if st, _ := a.status(id); st != want {
				return false, id + " " + st
			}
		}
		return true, ""
	})
}

func (a *api) waitGone(id string) {
	a.t.Helper()
	poll.Until(a.t, 2*time.Minute, id+" gone", func() (bool, string) {
		_, code := a.status(id)
		return code == http.StatusNotFound, fmt.Sprint(code)
	})
}

// snapshot is what a client reads of the records, at fixed microversions,
// as JSON by record, without what a newer release may compute differently
// (hostId, updated) and with the API's address (which changes) left out.
func (a *api) snapshot(s servers) map[string]string {
	a.t.Helper()
	out := map[string]any{}
	for _, id := range append(append([]string{}, s.active...), s.stopped...) {
		var body struct {
			Server map[string]any `json:"server"`
		}
		a.call("GET", "/v2.1/servers/"+id, "2.79", nil, &body)
		// server_groups: the previous release showed [] for every server
		// (since fixed); the membership is compared in os-server-groups.
		for _, k := range []string{"hostId", "updated", "server_groups"} {
			delete(body.Server, k)
		}
		var actions struct {
			Actions []map[string]any `json:"instanceActions"`
		}
		a.call("GET", "/v2.1/servers/"+id+"/os-instance-actions", "2.21", nil, &actions)
		for _, act := range actions.Actions {
			delete(act, "updated_at")
		}
		out["server "+id] = body.Server
		out["actions "+id] = actions.Actions
	}
	var deleted struct {
		Servers []map[string]any `json:"servers"`
	}
	a.call("GET", "/v2.1/servers/detail?changes-since=2000-01-01T00:00:00Z&status=DELETED", "2.1", nil, &deleted)
	ids := []string{}
	for _, sv := range deleted.Servers {
		ids = append(ids, fmt.Sprint(sv["id"]))
	}
	out["deleted"] = ids
	for _, path := range []string{"/v2.1/os-keypairs", "/v2.1/flavors/detail", "/v2.1/os-server-groups", "/v2.1/os-quota-sets/admin"} {
		var body any
		a.call("GET", path, "2.64", nil, &body)
		out[path] = body
	}
	text := map[string]string{}
	for k, v := range out {
		raw, err := json.Marshal(v)
		if err != nil {
			a.t.Fatal(err)
		}
		text[k] = strings.ReplaceAll(string(raw), a.p.API, "")
	}
	return text
}

// goOn checks the upgraded ingot acts on the old records.
func (a *api) goOn(s servers) {
	a.t.Helper()
	a.call("POST", "/v2.1/servers/"+s.stopped[0]+"/action", "2.1", map[string]any{"os-start": nil}, nil)
	a.call("DELETE", "/v2.1/servers/"+s.active[0], "2.1", nil, nil)
	var out struct {
		Server struct{ ID string } `json:"server"`
	}
	var img struct {
		Images []struct{ ID string } `json:"images"`
	}
	a.call("GET", "/v2.1/images", "2.1", nil, &img)
	a.call("POST", "/v2.1/servers", "2.37", map[string]any{"server": map[string]any{"name": "after", "flavorRef": "bm",
		"imageRef": img.Images[0].ID, "networks": "none"}}, &out)
	a.waitStatus([]string{s.stopped[0], out.Server.ID}, "ACTIVE")
	a.waitGone(s.active[0])
}
