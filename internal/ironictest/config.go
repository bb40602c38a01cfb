package ironictest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"text/template"
)

type configParams struct {
	Port            int
	DB              string // absolute path
	LockDir         string
	CallbackTimeout int // seconds
	DeployDelay     int // seconds, 0 for none
	Keystone        *Keystone
	NotifyURL       string // transport_url of [oslo_messaging_notifications]; "" for none
	Neutron         *Neutron
	Glance          bool
	Cinder          bool
	PolicyFile      string // "" for Ironic's defaults
}

// configTmpl is the minimal working standalone config (docs/ironic.md §1)
// plus what the harness needs:
//   - custom-agent next to fake, for deploys that wait in "wait call-back"
//     until deploy_callback_timeout (§8); custom-agent's prepare needs an API
//     URL, given by [service_catalog] endpoint_override;
//   - noop network (VIF calls are no-ops, §4), and noop/external/fake storage
//     for volume targets (§5);
//   - check_provision_state_interval = 1 so a timed-out deploy fails within a
//     second of its timeout;
//   - node_locked_retry_attempts = 1: a locked node answers 409 at once
//     instead of after 2 s (§7);
//   - no automated cleaning, no power notifications to a Nova that is not there.
var configTmpl = template.Must(template.New("ironic.conf").Parse(`# Written by ingot's internal/ironictest.
[DEFAULT]
auth_strategy = {{if .Keystone}}keystone{{else}}noauth{{end}}
rpc_transport = none{{if .NotifyURL}}
notification_level = info{{end}}
host = localhost
enabled_hardware_types = fake-hardware
enabled_boot_interfaces = fake
enabled_deploy_interfaces = fake,custom-agent
default_deploy_interface = fake
enabled_management_interfaces = fake
enabled_power_interfaces = fake
enabled_network_interfaces = noop{{if .Neutron}},flat,neutron{{end}}
default_network_interface = noop
enabled_storage_interfaces = noop,external,fake{{if .Cinder}},cinder{{end}}
enabled_rescue_interfaces = no-rescue,fake
default_rescue_interface = no-rescue
default_storage_interface = noop

[api]
host_ip = 127.0.0.1
port = {{.Port}}

[database]
connection = sqlite:///{{.DB}}

[dhcp]
dhcp_provider = none

[conductor]
automated_clean = false
deploy_callback_timeout = {{.CallbackTimeout}}
check_provision_state_interval = 1
node_locked_retry_attempts = 1

[service_catalog]
endpoint_override = http://127.0.0.1:{{.Port}}

[nova]
send_power_notifications = false

[fake]
deploy_delay = {{.DeployDelay}}

[oslo_concurrency]
lock_path = {{.LockDir}}
{{with .PolicyFile}}
[oslo_policy]
policy_file = {{.}}
{{end}}{{with .NotifyURL}}
[oslo_messaging_notifications]
driver = messagingv2
transport_url = {{.}}
{{end}}{{if and .Neutron .Keystone}}
[neutron]
auth_type = password
auth_url = {{.Keystone.AuthURL}}
username = {{.Neutron.Username}}
password = {{.Neutron.Password}}
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne
cleaning_network = {{.Neutron.Network}}
provisioning_network = {{.Neutron.Network}}
{{end}}{{if and .Cinder .Keystone}}
[cinder]
{{template "serviceAuth" .Keystone}}{{end}}{{if and .Glance .Keystone}}
[glance]
{{template "serviceAuth" .Keystone}}{{end}}{{with .Keystone}}
[keystone_authtoken]
www_authenticate_uri = {{.AuthURL}}
{{template "password" .}}{{end}}{{define "password"}}auth_type = password
auth_url = {{.AuthURL}}
username = {{.Username}}
password = {{.Password}}
project_name = {{.ProjectName}}
user_domain_name = Default
project_domain_name = Default
{{end}}{{define "serviceAuth"}}{{template "password" .}}region_name = RegionOne
{{end}}`))

func renderConfig(p configParams) string {
	var b bytes.Buffer
	if err := configTmpl.Execute(&b, p); err != nil {
		panic(err) // the template and its parameters are fixed
	}
	return b.String()
}

var (
	schemaOnce sync.Once
	schemaPath string
	schemaErr  error
)

// schemaTemplate returns an SQLite file holding Ironic's empty schema, made
// once per machine and Ironic version (ironic-dbsync costs 2–6 s; a copy of
// the 256 KB file costs nothing). The file lives in the system temp dir,
// keyed by the installed Ironic's version; it is written under a temporary
// name and renamed, so concurrent test binaries never see half a file.
func schemaTemplate() (string, error) {
	schemaOnce.Do(func() { schemaPath, schemaErr = makeSchema() })
	return schemaPath, schemaErr
}

func makeSchema() (string, error) {
	dir := filepath.Join(os.TempDir(), "ingot-ironictest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "schema-"+ironicVersion()+".sqlite")
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		return path, nil
	}
	work, err := os.MkdirTemp(dir, "dbsync-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	db := filepath.Join(work, "schema.sqlite")
	conf := filepath.Join(work, "ironic.conf")
	cfg := fmt.Sprintf("[DEFAULT]\nauth_strategy = noauth\nrpc_transport = none\n[database]\nconnection = sqlite:///%s\n", db)
	if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
		return "", err
	}
	out, err := exec.Command(dbsyncBin, "--config-file", conf, "create_schema").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s create_schema: %v\n%s", dbsyncBin, err, out)
	}
	if err := os.Rename(db, path); err != nil {
		return "", err
	}
	return path, nil
}

// ironicVersion names the installed Ironic, e.g. "21.4.4-1700000000", from
// its egg-info directory (the modification time tells a reinstall apart).
func ironicVersion() string {
	matches, _ := filepath.Glob("/usr/lib/python3/dist-packages/ironic-*.*-info")
	for _, m := range matches {
		base := filepath.Base(m)
		v := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(base, "ironic-"), ".egg-info"), ".dist-info")
		if st, err := os.Stat(m); err == nil {
			return fmt.Sprintf("%s-%d", v, st.ModTime().Unix())
		}
	}
	if st, err := os.Stat(dbsyncBin); err == nil {
		return fmt.Sprintf("unknown-%d", st.ModTime().Unix())
	}
	return "unknown"
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
