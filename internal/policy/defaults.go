package policy

// Rule is one default rule.
type Rule struct {
	Name, Check, Description string
}

// Base rules, as in Nova 2023.1 (nova/policies/base.py). Keystone's
// implied roles make an admin a member and a member a reader.
const (
	Admin                = "rule:context_is_admin"
	ProjectReaderOrAdmin = "rule:project_reader_or_admin"
	ProjectMemberOrAdmin = "rule:project_member_or_admin"
	ownerOrAdmin         = "(rule:context_is_admin) or user_id:%(user_id)s"
)

// Names of the rules the API checks.
const (
	ContextIsAdmin = "context_is_admin"

	ServersIndex           = "os_compute_api:servers:index"
	ServersIndexAllTenants = "os_compute_api:servers:index:get_all_tenants"
	ServersDetail          = "os_compute_api:servers:detail"
	ServersDetailAll       = "os_compute_api:servers:detail:get_all_tenants"
	ServersShow            = "os_compute_api:servers:show"
	ServersShowHostStatus  = "os_compute_api:servers:show:host_status"
	ServersCreate          = "os_compute_api:servers:create"
	ServersDelete          = "os_compute_api:servers:delete"
	ServersForceDelete     = "os_compute_api:os-deferred-delete:force"
	ServersRestore         = "os_compute_api:os-deferred-delete:restore"
	ExtendedAttributes     = "os_compute_api:os-extended-server-attributes"
	ActionsList            = "os_compute_api:os-instance-actions:list"
	ActionsShow            = "os_compute_api:os-instance-actions:show"
	ActionsEvents          = "os_compute_api:os-instance-actions:events"
	ActionsEventDetails    = "os_compute_api:os-instance-actions:events:details"
	ServerMetadataIndex    = "os_compute_api:server-metadata:index"
	ServerMetadataShow     = "os_compute_api:server-metadata:show"
	ServerMetadataCreate   = "os_compute_api:server-metadata:create"
	ServerMetadataUpdate   = "os_compute_api:server-metadata:update"
	ServerMetadataUpdAll   = "os_compute_api:server-metadata:update_all"
	ServerMetadataDelete   = "os_compute_api:server-metadata:delete"
	ServersUpdate          = "os_compute_api:servers:update"
	ServersReboot          = "os_compute_api:servers:reboot"
	ServersStart           = "os_compute_api:servers:start"
	ServersStop            = "os_compute_api:servers:stop"
	ServersRebuild         = "os_compute_api:servers:rebuild"
	Rescue                 = "os_compute_api:os-rescue"
	ResetState             = "os_compute_api:os-admin-actions:reset_state"
	Unrescue               = "os_compute_api:os-unrescue"
	Lock                   = "os_compute_api:os-lock-server:lock"
	Unlock                 = "os_compute_api:os-lock-server:unlock"
	UnlockOverride         = "os_compute_api:os-lock-server:unlock:unlock_override"
	SecurityGroupsList     = "os_compute_api:os-security-groups:list"
	SecurityGroupsGet      = "os_compute_api:os-security-groups:get"
	SecurityGroupsShow     = "os_compute_api:os-security-groups:show"
	SecurityGroupsCreate   = "os_compute_api:os-security-groups:create"
	SecurityGroupsUpdate   = "os_compute_api:os-security-groups:update"
	SecurityGroupsDelete   = "os_compute_api:os-security-groups:delete"
	SecurityGroupsRuleAdd  = "os_compute_api:os-security-groups:rule:create"
	SecurityGroupsRuleDel  = "os_compute_api:os-security-groups:rule:delete"
	SecurityGroupsAdd      = "os_compute_api:os-security-groups:add"
	SecurityGroupsRemove   = "os_compute_api:os-security-groups:remove"
	IPsIndex               = "os_compute_api:ips:index"
	InterfacesList         = "os_compute_api:os-attach-interfaces:list"
	InterfacesShow         = "os_compute_api:os-attach-interfaces:show"
	InterfacesCreate       = "os_compute_api:os-attach-interfaces:create"
	InterfacesDelete       = "os_compute_api:os-attach-interfaces:delete"
	ServerTagsIndex        = "os_compute_api:os-server-tags:index"
	ServerTagsShow         = "os_compute_api:os-server-tags:show"
	ServerTagsUpdate       = "os_compute_api:os-server-tags:update"
	ServerTagsUpdateAll    = "os_compute_api:os-server-tags:update_all"
	ServerTagsDelete       = "os_compute_api:os-server-tags:delete"
	ServerTagsDeleteAll    = "os_compute_api:os-server-tags:delete_all"
	VolumeAttachmentsIndex = "os_compute_api:os-volumes-attachments:index"
	VolumeAttachmentsShow  = "os_compute_api:os-volumes-attachments:show"
	// VolumeAttachmentsCreate and …Delete attach and detach a volume;
	// …Swap is Cinder's swap during a volume migration.
	VolumeAttachmentsCreate = "os_compute_api:os-volumes-attachments:create"
	VolumeAttachmentsDelete = "os_compute_api:os-volumes-attachments:delete"
	VolumeAttachmentsSwap   = "os_compute_api:os-volumes-attachments:swap"
	VolumeAttachmentsUpdate = "os_compute_api:os-volumes-attachments:update"
	NovaVolumesList         = "os_compute_api:os-volumes:list"
	NovaVolumesDetail       = "os_compute_api:os-volumes:detail"
	NovaVolumesShow         = "os_compute_api:os-volumes:show"
	NovaVolumesCreate       = "os_compute_api:os-volumes:create"
	NovaVolumesDelete       = "os_compute_api:os-volumes:delete"
	NovaSnapshotsList       = "os_compute_api:os-volumes:snapshots:list"
	NovaSnapshotsDetail     = "os_compute_api:os-volumes:snapshots:detail"
	NovaSnapshotsShow       = "os_compute_api:os-volumes:snapshots:show"
	NovaSnapshotsCreate     = "os_compute_api:os-volumes:snapshots:create"
	NovaSnapshotsDelete     = "os_compute_api:os-volumes:snapshots:delete"
	NovaNetworksList        = "os_compute_api:os-networks:list"
	NovaNetworksShow        = "os_compute_api:os-networks:show"
	ServerPasswordShow      = "os_compute_api:os-server-password:show"
	ServerDiagnostics       = "os_compute_api:os-server-diagnostics"
	ServerExternalEvents    = "os_compute_api:os-server-external-events:create"
	ServerPasswordClear     = "os_compute_api:os-server-password:clear"
	AZList                  = "os_compute_api:os-availability-zone:list"
	AZDetail                = "os_compute_api:os-availability-zone:detail"
	FlavorExtraSpecsIndex   = "os_compute_api:os-flavor-extra-specs:index"
	FlavorExtraSpecsShow    = "os_compute_api:os-flavor-extra-specs:show"
	KeypairsIndex           = "os_compute_api:os-keypairs:index"
	KeypairsCreate          = "os_compute_api:os-keypairs:create"
	KeypairsShow            = "os_compute_api:os-keypairs:show"
	KeypairsDelete          = "os_compute_api:os-keypairs:delete"
	QuotaShow               = "os_compute_api:os-quota-sets:show"
	QuotaUpdate             = "os_compute_api:os-quota-sets:update"
	QuotaDefaults           = "os_compute_api:os-quota-sets:defaults"
	QuotaDetail             = "os_compute_api:os-quota-sets:detail"
	QuotaDelete             = "os_compute_api:os-quota-sets:delete"
	QuotaClassShow          = "os_compute_api:os-quota-class-sets:show"
	QuotaClassUpdate        = "os_compute_api:os-quota-class-sets:update"
	Limits                  = "os_compute_api:limits"
	LimitsOtherProject      = "os_compute_api:limits:other_project"
	ServersAllowAllFilters  = "os_compute_api:servers:allow_all_filters"
	IPsShow                 = "os_compute_api:ips:show"
	Extensions              = "os_compute_api:extensions"
	TenantUsageList         = "os_compute_api:os-simple-tenant-usage:list"
	TenantUsageShow         = "os_compute_api:os-simple-tenant-usage:show"
	UsageAuditLogList       = "os_compute_api:os-instance-usage-audit-log:list"
	UsageAuditLogShow       = "os_compute_api:os-instance-usage-audit-log:show"
	MigrationsIndex         = "os_compute_api:os-migrations:index"

	// The admin compute surface (admin.go lists their defaults).
	HypervisorsList        = "os_compute_api:os-hypervisors:list"
	HypervisorsListDetail  = "os_compute_api:os-hypervisors:list-detail"
	HypervisorsStatistics  = "os_compute_api:os-hypervisors:statistics"
	HypervisorsShow        = "os_compute_api:os-hypervisors:show"
	HypervisorsUptime      = "os_compute_api:os-hypervisors:uptime"
	HypervisorsSearch      = "os_compute_api:os-hypervisors:search"
	HypervisorsServers     = "os_compute_api:os-hypervisors:servers"
	ServicesList           = "os_compute_api:os-services:list"
	ServicesUpdate         = "os_compute_api:os-services:update"
	ServicesDelete         = "os_compute_api:os-services:delete"
	HostsList              = "os_compute_api:os-hosts:list"
	HostsShow              = "os_compute_api:os-hosts:show"
	HostsUpdate            = "os_compute_api:os-hosts:update"
	HostsStart             = "os_compute_api:os-hosts:start"
	HostsShutdown          = "os_compute_api:os-hosts:shutdown"
	HostsReboot            = "os_compute_api:os-hosts:reboot"
	FlavorCreate           = "os_compute_api:os-flavor-manage:create"
	FlavorUpdate           = "os_compute_api:os-flavor-manage:update"
	FlavorDelete           = "os_compute_api:os-flavor-manage:delete"
	FlavorAccessList       = "os_compute_api:os-flavor-access"
	FlavorAccessAdd        = "os_compute_api:os-flavor-access:add_tenant_access"
	FlavorAccessRemove     = "os_compute_api:os-flavor-access:remove_tenant_access"
	FlavorExtraSpecsCreate = "os_compute_api:os-flavor-extra-specs:create"
	FlavorExtraSpecsUpdate = "os_compute_api:os-flavor-extra-specs:update"
	FlavorExtraSpecsDelete = "os_compute_api:os-flavor-extra-specs:delete"
	ServerGroupsCreate     = "os_compute_api:os-server-groups:create"
	ServerGroupsDelete     = "os_compute_api:os-server-groups:delete"
	ServerGroupsIndex      = "os_compute_api:os-server-groups:index"
	ServerGroupsIndexAll   = "os_compute_api:os-server-groups:index:all_projects"
	ServerGroupsShow       = "os_compute_api:os-server-groups:show"
	AggregatesIndex        = "os_compute_api:os-aggregates:index"
	AggregatesCreate       = "os_compute_api:os-aggregates:create"
	AggregatesShow         = "os_compute_api:os-aggregates:show"
	AggregatesUpdate       = "os_compute_api:os-aggregates:update"
	AggregatesDelete       = "os_compute_api:os-aggregates:delete"
	AggregatesAddHost      = "os_compute_api:os-aggregates:add_host"
	AggregatesRemoveHost   = "os_compute_api:os-aggregates:remove_host"
	AggregatesSetMetadata  = "os_compute_api:os-aggregates:set_metadata"

	// Not Nova's: the look-ups ingot answers in Glance, Neutron and
	// Cinder shapes, and ingot's own routes.
	Flavors       = "ingot:flavors:read"
	Images        = "ingot:images:read"
	Networks      = "ingot:networks:read"
	Ports         = "ingot:ports:read"
	VolumeGet     = "volume:get"
	VolumeGetAll  = "volume:get_all"
	VolumeCreate  = "volume:create"
	VolumeDelete  = "volume:delete"
	VolumeQuota   = "volume_extension:quotas:show"
	VolumeLimits  = "limits_extension:used_limits"
	NetworkQuota  = "get_quota"
	NodesIndex    = "ingot:nodes:index"
	Adopt         = "ingot:adopt"
	AdminAPIRule  = "admin_api"
	projectReader = "project_reader_api"
	projectMember = "project_member_api"
)

// Defaults is the built-in policy. docs and README list it.
var Defaults = []Rule{
	{ContextIsAdmin, "role:admin", "Decides who is an administrator: sees every project's resources by id, and all_tenants."},
	{AdminAPIRule, "is_admin:True", "Default rule for the administrator API."},
	{projectMember, "role:member and project_id:%(project_id)s", "Default rule for project-level non-admin writes."},
	{projectReader, "role:reader and project_id:%(project_id)s", "Default rule for project-level reads."},
	{"project_member_or_admin", "rule:project_member_api or rule:context_is_admin", "A project member, or an admin."},
	{"project_reader_or_admin", "rule:project_reader_api or rule:context_is_admin", "A project reader, or an admin."},

	{ServersIndex, ProjectReaderOrAdmin, "List servers (GET /servers)."},
	{ServersIndexAllTenants, Admin, "List servers of every project (all_tenants=1)."},
	{ServersDetail, ProjectReaderOrAdmin, "List servers with details (GET /servers/detail)."},
	{ServersDetailAll, Admin, "List servers of every project with details (all_tenants=1)."},
	{ServersShow, ProjectReaderOrAdmin, "Show a server."},
	{ServersShowHostStatus, Admin, "Show host_status in server bodies (2.16+)."},
	{ServersCreate, ProjectMemberOrAdmin, "Create a server."},
	{ServersDelete, ProjectMemberOrAdmin, "Delete a server."},
	{ServersForceDelete, ProjectMemberOrAdmin, "Force-delete a server (the forceDelete action)."},
	{ServersRestore, ProjectMemberOrAdmin, "Restore a soft-deleted server (the restore action; ingot never soft-deletes, so 409)."},
	{ExtendedAttributes, Admin, "Show OS-EXT-SRV-ATTR:* (node, user_data, …) in server bodies."},
	{ActionsList, ProjectReaderOrAdmin, "List a server's instance actions."},
	{ActionsShow, ProjectReaderOrAdmin, "Show an instance action."},
	{ActionsEvents, Admin, "Show action events below 2.51 and their host from 2.62."},
	{ActionsEventDetails, Admin, "Show the details of action events (2.84+)."},
	{ServerMetadataIndex, ProjectReaderOrAdmin, "List a server's metadata."},
	{ServerMetadataShow, ProjectReaderOrAdmin, "Show one metadata item of a server."},
	{ServerMetadataCreate, ProjectMemberOrAdmin, "Add or change metadata items of a server (POST, a merge)."},
	{ServerMetadataUpdate, ProjectMemberOrAdmin, "Set one metadata item of a server."},
	{ServerMetadataUpdAll, ProjectMemberOrAdmin, "Replace the whole metadata of a server (PUT)."},
	{ServerMetadataDelete, ProjectMemberOrAdmin, "Delete one metadata item of a server."},
	{ServersUpdate, ProjectMemberOrAdmin, "Update a server (name, description, hostname)."},
	{ServersReboot, ProjectMemberOrAdmin, "Reboot a server (the reboot action)."},
	{ServersStart, ProjectMemberOrAdmin, "Start a server (os-start)."},
	{ServersStop, ProjectMemberOrAdmin, "Stop a server (os-stop)."},
	{ServersRebuild, ProjectMemberOrAdmin, "Rebuild a server (the rebuild action)."},
	{Rescue, ProjectMemberOrAdmin, "Rescue a server (the rescue action)."},
	{ResetState, Admin, "Reset a server's state to error or active (os-resetState)."},
	{Unrescue, ProjectMemberOrAdmin, "Unrescue a server (the unrescue action)."},
	{Lock, ProjectMemberOrAdmin, "Lock a server."},
	{Unlock, ProjectMemberOrAdmin, "Unlock a server."},
	{UnlockOverride, Admin, "Unlock a server whoever locked it (checked after os-lock-server:unlock when an admin locked it)."},
	{SecurityGroupsList, ProjectReaderOrAdmin, "List a server's security groups."},
	{SecurityGroupsGet, ProjectReaderOrAdmin, "List the project's security groups (Neutron's, until 2.35)."},
	{SecurityGroupsShow, ProjectReaderOrAdmin, "Show a security group (until 2.35)."},
	{SecurityGroupsCreate, ProjectMemberOrAdmin, "Create a security group (until 2.35)."},
	{SecurityGroupsUpdate, ProjectMemberOrAdmin, "Update a security group (until 2.35)."},
	{SecurityGroupsDelete, ProjectMemberOrAdmin, "Delete a security group (until 2.35)."},
	{SecurityGroupsRuleAdd, ProjectMemberOrAdmin, "Add a rule to a security group (until 2.35)."},
	{SecurityGroupsRuleDel, ProjectMemberOrAdmin, "Delete a security group rule (until 2.35)."},
	{SecurityGroupsAdd, ProjectMemberOrAdmin, "Add a security group to a server's ports (addSecurityGroup)."},
	{SecurityGroupsRemove, ProjectMemberOrAdmin, "Remove a security group from a server's ports (removeSecurityGroup)."},
	{IPsIndex, ProjectReaderOrAdmin, "List a server's addresses."},
	{InterfacesList, ProjectReaderOrAdmin, "List a server's interfaces."},
	{InterfacesShow, ProjectReaderOrAdmin, "Show one interface of a server."},
	{InterfacesCreate, ProjectMemberOrAdmin, "Attach an interface to a server (Ironic's VIF attach)."},
	{InterfacesDelete, ProjectMemberOrAdmin, "Detach an interface from a server (Ironic's VIF detach)."},
	{ServerTagsIndex, ProjectReaderOrAdmin, "List a server's tags."},
	{ServerTagsShow, ProjectReaderOrAdmin, "Check one tag of a server."},
	{ServerTagsUpdate, ProjectMemberOrAdmin, "Add one tag to a server."},
	{ServerTagsUpdateAll, ProjectMemberOrAdmin, "Replace a server's tags."},
	{ServerTagsDelete, ProjectMemberOrAdmin, "Delete one tag of a server."},
	{ServerTagsDeleteAll, ProjectMemberOrAdmin, "Delete every tag of a server."},
	{VolumeAttachmentsIndex, ProjectReaderOrAdmin, "List a server's volume attachments."},
	{VolumeAttachmentsShow, ProjectReaderOrAdmin, "Show one volume attachment of a server (Cinder asks it before deleting an attachment)."},
	{VolumeAttachmentsCreate, ProjectMemberOrAdmin, "Attach a volume to a server."},
	{VolumeAttachmentsDelete, ProjectMemberOrAdmin, "Detach a volume from a server."},
	{VolumeAttachmentsSwap, Admin, "Swap a server's volume (Cinder's call during a volume migration; Nova's Ironic driver cannot)."},
	{VolumeAttachmentsUpdate, ProjectMemberOrAdmin, "Change a volume attachment's delete_on_termination (2.85)."},
	{NovaVolumesList, ProjectReaderOrAdmin, "List volumes through Nova's volume proxy (os-volumes, up to 2.35; the cinder backend)."},
	{NovaVolumesDetail, ProjectReaderOrAdmin, "List volumes in detail through Nova's volume proxy (up to 2.35)."},
	{NovaVolumesShow, ProjectReaderOrAdmin, "Show a volume through Nova's volume proxy (up to 2.35)."},
	{NovaVolumesCreate, ProjectMemberOrAdmin, "Create a volume through Nova's volume proxy (up to 2.35)."},
	{NovaVolumesDelete, ProjectMemberOrAdmin, "Delete a volume through Nova's volume proxy (up to 2.35)."},
	{NovaSnapshotsList, ProjectReaderOrAdmin, "List volume snapshots through Nova's snapshot proxy (os-snapshots, up to 2.35; the cinder backend)."},
	{NovaSnapshotsDetail, ProjectReaderOrAdmin, "List volume snapshots in detail through Nova's snapshot proxy (up to 2.35)."},
	{NovaSnapshotsShow, ProjectReaderOrAdmin, "Show a volume snapshot through Nova's snapshot proxy (up to 2.35)."},
	{NovaSnapshotsCreate, ProjectMemberOrAdmin, "Snapshot a volume through Nova's snapshot proxy (up to 2.35)."},
	{NovaSnapshotsDelete, ProjectMemberOrAdmin, "Delete a volume snapshot through Nova's snapshot proxy (up to 2.35)."},
	{NovaNetworksList, ProjectReaderOrAdmin, "List networks through Nova's network proxy (os-networks, up to 2.35)."},
	{NovaNetworksShow, ProjectReaderOrAdmin, "Show a network through Nova's network proxy (os-networks, up to 2.35)."},
	{ServerDiagnostics, Admin, "Show a server's diagnostics (what ingot knows of its machine)."},
	{ServerExternalEvents, Admin, "Send external events about servers (acknowledged; ingot reads Ironic itself)."},
	{ServerPasswordShow, ProjectReaderOrAdmin, "Show a server's password posted to the metadata service (always empty: ingot has none)."},
	{ServerPasswordClear, ProjectMemberOrAdmin, "Clear a server's password posted to the metadata service."},
	{AZList, "@", "List availability zones."},
	{AZDetail, Admin, "List availability zones with their hosts."},
	{FlavorExtraSpecsIndex, ProjectReaderOrAdmin, "List a flavor's extra specs."},
	{FlavorExtraSpecsShow, ProjectReaderOrAdmin, "Show one extra spec of a flavor."},
	{KeypairsIndex, ownerOrAdmin, "List keypairs (an admin may name another user with user_id)."},
	{KeypairsCreate, ownerOrAdmin, "Create or import a keypair."},
	{KeypairsShow, ownerOrAdmin, "Show a keypair."},
	{KeypairsDelete, ownerOrAdmin, "Delete a keypair."},
	{QuotaShow, ProjectReaderOrAdmin, "Show a project's quotas."},
	{QuotaUpdate, Admin, "Update a project's quotas."},
	{QuotaDefaults, "@", "Show the default quotas."},
	{QuotaDetail, ProjectReaderOrAdmin, "Show a project's quotas with usage."},
	{QuotaDelete, Admin, "Revert a project's quotas to the defaults."},
	{QuotaClassShow, Admin, "Show a quota class (default: the defaults every project gets)."},
	{QuotaClassUpdate, Admin, "Update a quota class (default: the defaults every project gets)."},
	{Limits, "@", "Show the caller's limits and usage."},
	{LimitsOtherProject, Admin, "Show another project's limits (tenant_id=)."},
	{ServersAllowAllFilters, Admin, "List servers with the admin-only filters (host, node; ip6 below 2.5)."},
	{IPsShow, ProjectReaderOrAdmin, "List a server's addresses on one network."},
	{Extensions, "@", "List and show the API extensions (GET /extensions)."},
	{TenantUsageList, Admin, "List every project's usage (os-simple-tenant-usage)."},
	{TenantUsageShow, ProjectReaderOrAdmin, "Show a project's usage (os-simple-tenant-usage/{project})."},
	{UsageAuditLogList, Admin, "List the instance usage audit log."},
	{UsageAuditLogShow, Admin, "Show the instance usage audit log before a time."},
	{MigrationsIndex, Admin, "List migrations (always empty: bare metal does not migrate)."},

	{Flavors, "@", "List and show flavors (Nova checks no policy there)."},
	{Images, "@", "The Glance-shaped image look-ups (the configured images are public)."},
	{Networks, "@", "The Neutron-shaped network look-ups (the configured networks are shared)."},
	{Ports, ProjectReaderOrAdmin, "The Neutron-shaped port look-ups (a port belongs to its server's project)."},
	{VolumeGet, ProjectReaderOrAdmin, "Show a volume."},
	{VolumeGetAll, ProjectReaderOrAdmin, "List volumes."},
	{VolumeCreate, ProjectMemberOrAdmin, "Create a volume."},
	{VolumeDelete, ProjectMemberOrAdmin, "Delete a volume."},
	{VolumeQuota, ProjectReaderOrAdmin, "The Cinder-shaped quota set (what `openstack quota show` reads)."},
	{VolumeLimits, ProjectReaderOrAdmin, "The Cinder-shaped limits (what `openstack limits show` reads)."},
	{NetworkQuota, ProjectReaderOrAdmin, "The Neutron-shaped quota (what `openstack quota show` reads)."},
	{NodesIndex, Admin, "List Ironic nodes and their holders (GET /ingot/v1/nodes)."},
	{Adopt, Admin, "Adopt the instances Ironic runs for another service, or plan it (POST /ingot/v1/adopt)."},
}

func init() { Defaults = append(Defaults, adminDefaults...) }
