package api

import (
	"net/http"
	"sort"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
)

// GET /v2.1/extensions lists the v2 extension aliases Nova still reports
// for compatibility (the v2.1 API has no extensions; Nova answers a fixed
// list). ingot answers the same aliases and names, so a client that looks
// one up by alias finds it; what is behind each is the API itself, with the
// differences docs/clients.md lists.

// extension is one entry: alias, name and a one-line description.
type extension struct{ alias, name, description string }

var novaExtensions = []extension{
	{"NMN", "Multinic", "Several networks per server."},
	{"OS-DCF", "DiskConfig", "The OS-DCF:diskConfig member."},
	{"OS-EXT-AZ", "ExtendedAvailabilityZone", "The availability zone of a server."},
	{"OS-EXT-IMG-SIZE", "ImageSize", "The size of an image."},
	{"OS-EXT-IPS", "ExtendedIps", "The type of a server address."},
	{"OS-EXT-IPS-MAC", "ExtendedIpsMac", "The MAC address of a server address."},
	{"OS-EXT-SRV-ATTR", "ExtendedServerAttributes", "The extended attributes of a server."},
	{"OS-EXT-STS", "ExtendedStatus", "The extended status of a server."},
	{"OS-FLV-DISABLED", "FlavorDisabled", "Whether a flavor is disabled."},
	{"OS-FLV-EXT-DATA", "FlavorExtraData", "The ephemeral size of a flavor."},
	{"OS-SCH-HNT", "SchedulerHints", "Scheduler hints at create."},
	{"OS-SRV-USG", "ServerUsage", "The launch and termination times of a server."},
	{"os-access-ips", "AccessIPs", "The access addresses of a server."},
	{"os-admin-actions", "AdminActions", "Administrative server actions."},
	{"os-admin-password", "AdminPassword", "Changing a server's admin password."},
	{"os-agents", "Agents", "Guest agent builds."},
	{"os-aggregates", "Aggregates", "Host aggregates."},
	{"os-assisted-volume-snapshots", "AssistedVolumeSnapshots", "Assisted volume snapshots."},
	{"os-attach-interfaces", "AttachInterfaces", "A server's interfaces."},
	{"os-availability-zone", "AvailabilityZone", "Availability zones."},
	{"os-baremetal-ext-status", "BareMetalExtStatus", "The extended status of bare metal nodes."},
	{"os-baremetal-nodes", "BareMetalNodes", "Bare metal nodes."},
	{"os-block-device-mapping", "BlockDeviceMapping", "Block device mappings at create."},
	{"os-block-device-mapping-v2-boot", "BlockDeviceMappingV2Boot", "Booting from a block device mapping."},
	{"os-cell-capacities", "CellCapacities", "Cell capacities."},
	{"os-cells", "Cells", "Cells."},
	{"os-certificates", "Certificates", "Certificates."},
	{"os-cloudpipe", "Cloudpipe", "Cloudpipe."},
	{"os-cloudpipe-update", "CloudpipeUpdate", "Cloudpipe updates."},
	{"os-config-drive", "ConfigDrive", "The config_drive member."},
	{"os-console-auth-tokens", "ConsoleAuthTokens", "Console authentication tokens."},
	{"os-console-output", "ConsoleOutput", "A server's console output."},
	{"os-consoles", "Consoles", "Remote consoles."},
	{"os-create-backup", "CreateBackup", "The createBackup action."},
	{"os-create-server-ext", "Createserverext", "Create extensions."},
	{"os-deferred-delete", "DeferredDelete", "Deferred delete and forceDelete."},
	{"os-evacuate", "Evacuate", "Evacuating a server."},
	{"os-extended-evacuate-find-host", "ExtendedEvacuateFindHost", "Evacuating without naming a host."},
	{"os-extended-floating-ips", "ExtendedFloatingIps", "Floating IPs with a fixed address."},
	{"os-extended-hypervisors", "ExtendedHypervisors", "Extended hypervisor members."},
	{"os-extended-networks", "ExtendedNetworks", "Extended network members."},
	{"os-extended-quotas", "ExtendedQuotas", "Deleting quotas."},
	{"os-extended-rescue-with-image", "ExtendedRescueWithImage", "Rescue with an image."},
	{"os-extended-services", "ExtendedServices", "Disabling a service with a reason."},
	{"os-extended-services-delete", "ExtendedServicesDelete", "Deleting a service."},
	{"os-extended-status", "ExtendedStatus", "The extended status of a server."},
	{"os-extended-volumes", "ExtendedVolumes", "A server's attached volumes."},
	{"os-fixed-ips", "FixedIPs", "Fixed IPs."},
	{"os-flavor-access", "FlavorAccess", "Private flavors and their projects."},
	{"os-flavor-extra-specs", "FlavorExtraSpecs", "Flavor extra specs."},
	{"os-flavor-manage", "FlavorManage", "Creating and deleting flavors."},
	{"os-flavor-rxtx", "FlavorRxtx", "The rxtx factor of a flavor."},
	{"os-flavor-swap", "FlavorSwap", "The swap size of a flavor."},
	{"os-floating-ip-dns", "FloatingIpDns", "Floating IP DNS entries."},
	{"os-floating-ip-pools", "FloatingIpPools", "Floating IP pools."},
	{"os-floating-ips", "FloatingIps", "Floating IPs."},
	{"os-floating-ips-bulk", "FloatingIpsBulk", "Floating IPs in bulk."},
	{"os-fping", "Fping", "Pinging servers."},
	{"os-hide-server-addresses", "HideServerAddresses", "Hiding addresses in some states."},
	{"os-hosts", "Hosts", "Compute hosts."},
	{"os-hypervisor-status", "HypervisorStatus", "The status and state of a hypervisor."},
	{"os-hypervisors", "Hypervisors", "Hypervisors."},
	{"os-instance-actions", "InstanceActions", "A server's actions and events."},
	{"os-instance_usage_audit_log", "OSInstanceUsageAuditLog", "The instance usage audit log."},
	{"os-keypairs", "Keypairs", "Keypairs."},
	{"os-lock-server", "LockServer", "Locking a server."},
	{"os-migrate-server", "MigrateServer", "Migrating a server."},
	{"os-migrations", "Migrations", "Migrations."},
	{"os-multiple-create", "MultipleCreate", "Creating several servers at once."},
	{"os-networks", "Networks", "Networks."},
	{"os-networks-associate", "NetworkAssociationSupport", "Network associations."},
	{"os-pause-server", "PauseServer", "Pausing a server."},
	{"os-personality", "Personality", "Personality files."},
	{"os-preserve-ephemeral-rebuild", "PreserveEphemeralOnRebuild", "Keeping the ephemeral disk at a rebuild."},
	{"os-quota-class-sets", "QuotaClasses", "Quota classes."},
	{"os-quota-sets", "Quotas", "Quotas."},
	{"os-rescue", "Rescue", "Rescuing a server."},
	{"os-security-group-default-rules", "SecurityGroupDefaultRules", "Default security group rules."},
	{"os-security-groups", "SecurityGroups", "Security groups."},
	{"os-server-diagnostics", "ServerDiagnostics", "Server diagnostics."},
	{"os-server-external-events", "ServerExternalEvents", "Server external events."},
	{"os-server-group-quotas", "ServerGroupQuotas", "Server group quotas."},
	{"os-server-groups", "ServerGroups", "Server groups."},
	{"os-server-list-multi-status", "ServerListMultiStatus", "Listing servers by several statuses."},
	{"os-server-password", "ServerPassword", "A server's encrypted password."},
	{"os-server-sort-keys", "ServerSortKeys", "Sorting server lists."},
	{"os-server-start-stop", "ServerStartStop", "Starting and stopping a server."},
	{"os-services", "Services", "Compute services."},
	{"os-shelve", "Shelve", "Shelving a server."},
	{"os-simple-tenant-usage", "SimpleTenantUsage", "Project usage."},
	{"os-suspend-server", "SuspendServer", "Suspending a server."},
	{"os-tenant-networks", "OSTenantNetworks", "Project networks."},
	{"os-used-limits", "UsedLimits", "Used limits."},
	{"os-used-limits-for-admin", "UsedLimitsForAdmin", "Another project's used limits."},
	{"os-user-data", "UserData", "User data at create."},
	{"os-user-quotas", "UserQuotas", "Per-user quotas."},
	{"os-virtual-interfaces", "VirtualInterfaces", "Virtual interfaces."},
	{"os-volume-attachment-update", "VolumeAttachmentUpdate", "Swapping an attached volume."},
	{"os-volumes", "Volumes", "Volumes."},
}

// extensionView is an entry as Nova writes it: the namespace and updated
// time are Nova's fixed placeholders, the links empty.
func extensionView(e extension) extensionDoc {
	return extensionDoc{Alias: e.alias, Name: e.name, Description: e.description,
		Namespace: "http://docs.openstack.org/compute/ext/fake_xml",
		Updated:   "2014-12-03T00:00:00Z", Links: []any{}}
}

type extensionDoc struct {
	Alias       string `json:"alias"`
	Description string `json:"description"`
	Links       []any  `json:"links"`
	Name        string `json:"name"`
	Namespace   string `json:"namespace"`
	Updated     string `json:"updated"`
}

func (s *Service) extensionRoutes() {
	s.Compute("GET /v2.1/extensions", s.listExtensions)
	s.Compute("GET /v2.1/extensions/{alias}", s.showExtension)
}

func (s *Service) listExtensions(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.Extensions, r.Own()); err != nil {
		return err
	}
	out := make([]extensionDoc, 0, len(novaExtensions))
	for _, e := range novaExtensions {
		out = append(out, extensionView(e))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Alias < out[j].Alias })
	core.WriteJSON(w, http.StatusOK, struct {
		Extensions []extensionDoc `json:"extensions"`
	}{out})
	return nil
}

func (s *Service) showExtension(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.Extensions, r.Own()); err != nil {
		return err
	}
	alias := r.PathValue("alias")
	for _, e := range novaExtensions {
		if e.alias == alias {
			core.WriteJSON(w, http.StatusOK, struct {
				Extension extensionDoc `json:"extension"`
			}{extensionView(e)})
			return nil
		}
	}
	return core.NotFound("Extension %s could not be found.", alias)
}
