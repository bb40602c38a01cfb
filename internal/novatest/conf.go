package novatest

import "text/template"

// novaConf is what every Nova daemon reads; the databases are in
// databasesConf, given to all but nova-compute (which has no DB access).
var novaConf = template.Must(template.New("nova.conf").Parse(`# Written by ingot's internal/novatest.
[DEFAULT]
host = {{.Host}}
compute_driver = ironic.IronicDriver
enabled_apis = osapi_compute
osapi_compute_listen = 127.0.0.1
osapi_compute_listen_port = {{.Port}}
osapi_compute_workers = 1
my_ip = 127.0.0.1
transport_url = {{.Transport}}
reserved_host_memory_mb = 0
# The Ironic driver reports nodes at each resource update; new nodes wait
# for the next one (and up to periodic_fuzzy_delay more).
update_resources_interval = 10
periodic_fuzzy_delay = 0
# A stopped nova-compute shows down after service_down_time (default 60 s).
report_interval = 2
service_down_time = 8
{{if .PowerSync}}sync_power_state_interval = {{.PowerSync}}
{{end}}
state_path = {{.Dir}}/state
instances_path = {{.Dir}}/instances
debug = false

[api]
auth_strategy = keystone

[wsgi]
api_paste_config = /etc/nova/api-paste.ini

[conductor]
workers = 1

[scheduler]
workers = 1
discover_hosts_in_cells_interval = 5

[oslo_concurrency]
lock_path = {{.Dir}}/lock

[oslo_messaging_notifications]
driver = noop

[vnc]
enabled = false

[ironic]
{{if .IronicAuth}}{{.Service}}{{else}}auth_type = none
{{end}}endpoint_override = {{.Ironic}}

[glance]
region_name = RegionOne

[cinder]
os_region_name = RegionOne
{{if .Cinder}}{{.Service}}{{end}}
[placement]
{{.Service}}
[neutron]
{{.Service}}
[service_user]
send_service_user_token = true
{{.Service}}
{{.Authtoken}}service_token_roles_required = true
`))

// databasesConf holds the API database and cell1's.
var databasesConf = template.Must(template.New("nova-db.conf").Parse(`# Written by ingot's internal/novatest.
[api_database]
connection = {{.API}}

[database]
connection = {{.Cell1}}
`))

// placementConf is Placement's whole configuration.
var placementConf = template.Must(template.New("placement.conf").Parse(`# Written by ingot's internal/novatest.
[DEFAULT]
debug = false

[api]
auth_strategy = keystone

[placement_database]
connection = {{.DB}}

{{.Authtoken}}`))

// serviceAuth is a password block for Nova's own calls to Placement,
// Neutron and Keystone (service token), with Nova's service user.
var serviceAuth = template.Must(template.New("auth").Parse(`auth_type = password
auth_url = {{.AuthURL}}
username = {{.User}}
password = {{.Password}}
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne
`))
