// Package glancetest starts a real glance-api for tests: Debian's Glance
// (file store, one worker), a fresh PostgreSQL database, behind a
// keystonetest Keystone whose catalog gets its "image" endpoint and a
// service user. UploadImage makes an active image whose content matches its
// disk_format (Ironic checks the format of what it downloads).
//
// A start costs about 8 s (db_sync, then ~4 s until the API answers) and
// ~290 MiB over 2 processes: start one per test binary where possible.
//
// Skipped when glance-api is missing, unless INGOT_TEST_IRONIC=1: then a
// missing or broken Glance fails the test. .ci/install-glance.sh installs
// the packages.
package glancetest

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"text/template"
	"time"

	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/servicetest"
)

// Paths of Debian's Glance.
const (
	apiBin    = "/usr/bin/glance-api"
	manageBin = "/usr/bin/glance-manage"
	pasteIni  = "/etc/glance/glance-api-paste.ini"
	script    = ".ci/install-glance.sh"
)

// Env is one running glance-api.
type Env struct {
	// URL is Glance's root, e.g. http://127.0.0.1:40123 (the catalog's
	// "image" endpoint; the API is under /v2).
	URL string
	// Keystone is the identity service Glance validates tokens with.
	Keystone *keystonetest.Env
	// ServiceUser is Glance's own user in project service (admin, service).
	ServiceUser string
	// Proc is the API's process group (log, start time, RSS).
	Proc *servicetest.Proc
	// SyncTime is how long glance-manage db_sync took.
	SyncTime time.Duration

	hc *http.Client
}

var confTmpl = template.Must(template.New("glance-api.conf").Parse(`# Written by ingot's internal/glancetest.
[DEFAULT]
bind_host = 127.0.0.1
bind_port = {{.Port}}
workers = 1
show_image_direct_url = true
show_multiple_locations = true
enabled_backends = file1:file
debug = false

[glance_store]
default_backend = file1

[file1]
filesystem_store_datadir = {{.Dir}}/images

[os_glance_staging_store]
filesystem_store_datadir = {{.Dir}}/staging

[os_glance_tasks_store]
filesystem_store_datadir = {{.Dir}}/tasks

[database]
connection = {{.DB}}

[paste_deploy]
flavor = keystone
config_file = {{.Paste}}

{{.Authtoken}}
[oslo_concurrency]
lock_path = {{.Dir}}/lock

[oslo_messaging_notifications]
driver = noop
`))

// Start starts a glance-api behind ks for the test and stops it when the
// test ends.
func Start(t testing.TB, ks *keystonetest.Env) *Env {
	t.Helper()
	servicetest.Require(t, script, apiBin, manageBin, pasteIni)
	st := servicetest.Prepare(t, ks, "image", "glance", "images", "staging", "tasks", "lock")
	dir := st.Dir
	e := &Env{URL: st.URL, Keystone: ks, ServiceUser: st.User, hc: &http.Client{Timeout: 60 * time.Second}}
	conf := filepath.Join(dir, "glance-api.conf")
	var b bytes.Buffer
	if err := confTmpl.Execute(&b, map[string]any{"Port": st.Port, "Paste": pasteIni, "Dir": dir,
		"DB": servicetest.Database(t), "Authtoken": st.Authtoken}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if err := servicetest.Exec(dir, nil, manageBin, "--config-file", conf, "db_sync"); err != nil {
		t.Fatalf("glancetest: %v", err)
	}
	e.SyncTime = time.Since(begin)
	e.Proc = servicetest.Run(t, servicetest.Command{Name: "glance-api", Dir: dir, Port: st.Port,
		Argv:  []string{apiBin, "--config-file", conf, "--log-file", filepath.Join(dir, "glance-api.log")},
		Ready: e.URL + "/versions"})
	return e
}
