package cindertest

import (
	"bytes"
	_ "embed"
	"os"
	"path/filepath"
	"text/template"
)

// fakeDriver is the volume driver cinder-volume loads (module
// ingot_cinder_fake on its PYTHONPATH).
//
//go:embed ingot_cinder_fake.py
var fakeDriver []byte

// confTmpl is one cinder.conf for the three daemons. The scheduler and the
// volume service meet on the vhost; keystonemiddleware validates with the
// cinder service user; [nova] is left to the catalog (as a deployment does),
// so an attachment delete's call-back goes to the catalog's compute endpoint.
var confTmpl = template.Must(template.New("cinder.conf").Parse(`# Written by ingot's internal/cindertest.
[DEFAULT]
host = ingot-cinder
my_ip = 127.0.0.1
state_path = {{.Dir}}
transport_url = {{.Transport}}
auth_strategy = keystone
api_paste_config = /etc/cinder/api-paste.ini
osapi_volume_listen = 127.0.0.1
osapi_volume_listen_port = {{.Port}}
osapi_volume_workers = 1
enabled_backends = fake
default_volume_type = __DEFAULT__
rootwrap_config = /etc/cinder/rootwrap.conf
report_interval = 2
periodic_interval = 5
use_stderr = false

[database]
connection = {{.Database}}

[keystone_authtoken]
www_authenticate_uri = {{.Keystone}}
auth_url = {{.Keystone}}
auth_type = password
username = {{.User}}
password = {{.Password}}
project_name = service
user_domain_name = Default
project_domain_name = Default

[fake]
volume_driver = ingot_cinder_fake.IscsiFakeDriver
volume_backend_name = fake

[oslo_concurrency]
lock_path = {{.Dir}}/lock

[coordination]
backend_url = file://{{.Dir}}/coordination
`))

type confData struct {
	Dir, Transport, Database, Keystone, User, Password string
	Port                                               int
}

// writeFiles writes cinder.conf and the driver module into dir.
func writeFiles(dir string, d confData) error {
	var b bytes.Buffer
	if err := confTmpl.Execute(&b, d); err != nil {
		return err
	}
	for _, sub := range []string{"lock", "coordination", "py"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "py", "ingot_cinder_fake.py"), fakeDriver, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "cinder.conf"), b.Bytes(), 0o600)
}
