// Package api serves ingot's Nova-compatible compute API (a faithful subset
// of the OpenStack Compute API v2.1), the Glance- and Neutron-shaped look-ups
// the OpenStack CLI makes on the same endpoint, health and metrics, and the
// ingot node listing. It only writes desired state and answers: no handler
// performs a build step, and every 2xx is sent after the store committed.
//
// Endpoints (microversions 2.1–2.92 on the compute routes; see
// docs/clients.md for why each exists):
//
//	GET  /  /v2.1  /v2.1/  /v2  /v2/                version documents (no auth)
//	POST /v2.1/servers                             create → 202
//	GET  /v2.1/servers[/detail]                    name, status, image, flavor, limit, marker
//	GET  /v2.1/servers/{id}                        404 for names, unknown and deleted ids
//	PUT|DELETE /v2.1/servers/{id}                  update (servers/update.go) / → 204
//	POST /v2.1/servers/{id}/action                 reboot os-stop os-start rebuild rescue unrescue lock unlock forceDelete (servers/day2.go, servers/rebuild.go); the others as Nova on Ironic (servers/unserved.go)
//	GET  /v2.1/servers/{id}/os-instance-actions[/{request_id}]   also for deleted servers
//	GET  /v2.1/flavors[/detail]  /v2.1/flavors/{id or name}[/os-extra_specs[/{key}]]
//	GET  /v2.1/images[/{id}]  /image/  /image/v2/images[/{id}]                 Glance shapes; Nova's proxy (also /v2.1/images/detail, ≤2.35) for a compute microversion (lookup/novaimages.go)
//	GET|POST|PUT /v2.1/images/{id}/metadata  GET|PUT|DELETE …/metadata/{key}   Nova's image metadata proxy, up to 2.38: Glance's properties with the caller's token; the configured images read-only (lookup/imagemetadata.go)
//	GET  /v2.1[/v2.0]/networks[/{id}]  /v2.1[/v2.0]/ports/{id}  /network/  /network/v2.0/…  Neutron shapes
//	GET  /v2.1/os-networks[/{id}]                  Nova's network proxy, up to 2.35 (lookup/osnetworks.go)
//	GET|DELETE /v2.1/servers/{id}/os-server-password   always "" (no metadata service; servers/serverpassword.go)
//	GET  /v2.1/servers/{id}/{metadata,ips,os-interface,tags,os-volume_attachments,os-security-groups}
//	POST|PUT …/metadata  GET|PUT|DELETE …/metadata/{key}  PUT|DELETE …/tags  GET|PUT|DELETE …/tags/{tag}   servers/update.go, servers/tags.go
//	GET  /v2.1/os-availability-zone[/detail]  …/ports?device_id=|id=|name=    read-only extras
//	GET  /volume/  POST|GET /volume/v3/{project}/volumes[/detail]  GET|DELETE …/volumes/{id}   Cinder shapes, the embedded registry (volume/volumes.go)
//	GET|POST /v2.1/os-volumes  GET …/os-volumes/detail  GET|DELETE /v2.1/os-volumes/{id}   Nova's volume proxy over Cinder, up to 2.35, volume.backend: cinder (limit, offset; volume/novaproxy.go)
//	GET|POST /v2.1/os-snapshots  GET …/os-snapshots/detail  GET|DELETE …/os-snapshots/{id}   Nova's snapshot proxy over Cinder, the same (volume/novasnapshots.go)
//	GET  /v2.1/servers/{id}/os-volume_attachments/{volume}   one attachment, as Cinder asks it (servers/volumes_render.go)
//	GET|POST /v2.1/os-keypairs  GET|DELETE /v2.1/os-keypairs/{name}     keypairs/keypairs.go
//	GET|PUT|DELETE /v2.1/os-quota-sets/{project}[/detail|/defaults]  GET /v2.1/limits   quotas/quotas.go
//	GET  /v2.1/extensions[/{alias}]  /v2.1/servers/{id}/ips/{network}  /v2.1/os-migrations   extensions.go, servers/conformance.go
//	GET  /v2.1/os-simple-tenant-usage[/{project}]  /v2.1/os-instance_usage_audit_log[/{before}]   servers/usage.go
//	GET  /ingot/v1/nodes  /healthz  /readyz  /metrics
//
// Who may call what: core/authz.go (every guarded route authenticates and
// decides with a rule of internal/policy; another project's resource is 404).
//
// Deliberate differences from Nova: the name filter is a case-sensitive
// regular expression in Go's RE2 syntax (Nova's is Python's, with the
// database's case rules); omitted networks mean "auto" (the first
// configured network) at every microversion, where Nova requires the member
// from 2.37 (docs/clients.md); create fields
// ingot cannot honour (ports, fixed IPs, other security groups) are
// refused with 400 rather than ignored. Bodies carry exactly Nova's
// members; the extension members ("ingot:phase", "ingot:fault",
// "ingot:attempts") only with the request header X-Ingot-Extensions: true.
//
// Layout: core is the HTTP core every service shares (request context,
// policy checks, microversions, Nova-shaped errors, JSON); servers,
// admin, flavors, keypairs, quotas, volume and lookup each serve their
// routes over it; this package wires them and keeps the router.
package api
