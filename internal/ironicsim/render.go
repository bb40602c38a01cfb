package ironicsim

import (
	"strings"
)

// nodeField is one field of Ironic's node object: the microversion that
// introduced it and how to read it.
type nodeField struct {
	name string
	min  int
	get  func(n *node) any
}

func ifaceGetter(kind string) func(n *node) any {
	return func(n *node) any { return strOrNil(*n.ifaceField(kind)) }
}

func mapOrEmpty(m map[string]any) any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// nodeFields lists the fields of a full node body in Ironic 21.4
// (_get_fields_for_node_query plus uuid, timestamps and the API-filled
// allocation_uuid, chassis_uuid and conductor). Links are added separately.
var nodeFields = []nodeField{
	{"uuid", 1, func(n *node) any { return n.UUID }},
	{"created_at", 1, func(n *node) any { return pyTime(n.CreatedAt) }},
	{"updated_at", 1, func(n *node) any { return timeOrNil(n.UpdatedAt) }},
	{"automated_clean", 47, func(n *node) any {
		if n.AutomatedClean == nil {
			return nil
		}
		return *n.AutomatedClean
	}},
	{"bios_interface", 40, ifaceGetter("bios")},
	{"boot_interface", 31, ifaceGetter("boot")},
	{"boot_mode", 75, func(n *node) any { return nil }},
	{"clean_step", 7, func(n *node) any { return map[string]any{} }},
	{"conductor_group", 46, func(n *node) any { return n.ConductorGroup }},
	{"console_enabled", 1, func(n *node) any { return n.ConsoleEnabled }},
	{"console_interface", 31, ifaceGetter("console")},
	{"deploy_interface", 31, ifaceGetter("deploy")},
	{"deploy_step", 44, func(n *node) any { return map[string]any{} }},
	{"description", 51, func(n *node) any { return strOrNil(n.Description) }},
	{"driver", 1, func(n *node) any { return n.Driver }},
	{"driver_info", 1, func(n *node) any { return maskSecrets(n.DriverInfo) }},
	{"driver_internal_info", 3, func(n *node) any { return mapOrEmpty(n.DriverInternalInfo) }},
	{"extra", 1, func(n *node) any { return mapOrEmpty(n.Extra) }},
	{"fault", 42, func(n *node) any { return strOrNil(n.Fault) }},
	{"inspection_finished_at", 6, func(n *node) any { return nil }},
	{"inspection_started_at", 6, func(n *node) any { return nil }},
	{"inspect_interface", 31, ifaceGetter("inspect")},
	{"instance_info", 1, func(n *node) any { return maskInstanceInfo(n.InstanceInfo) }},
	{"instance_uuid", 1, func(n *node) any { return strOrNil(n.InstanceUUID) }},
	{"last_error", 1, func(n *node) any { return strOrNil(n.LastError) }},
	{"lessee", 65, func(n *node) any { return strOrNil(n.Lessee) }},
	{"maintenance", 1, func(n *node) any { return n.Maintenance }},
	{"maintenance_reason", 1, func(n *node) any { return strOrNil(n.MaintenanceReason) }},
	{"management_interface", 31, ifaceGetter("management")},
	{"name", 5, func(n *node) any { return strOrNil(n.Name) }},
	{"network_data", 66, func(n *node) any { return mapOrEmpty(n.NetworkData) }},
	{"network_interface", 20, ifaceGetter("network")},
	{"owner", 50, func(n *node) any { return strOrNil(n.Owner) }},
	{"power_interface", 31, ifaceGetter("power")},
	{"power_state", 1, func(n *node) any { return strOrNil(n.PowerState) }},
	{"properties", 1, func(n *node) any { return mapOrEmpty(n.Properties) }},
	{"protected", 48, func(n *node) any { return n.Protected }},
	{"protected_reason", 48, func(n *node) any { return strOrNil(n.ProtectedReason) }},
	{"provision_state", 1, func(n *node) any { return strOrNil(n.ProvisionState) }},
	{"provision_updated_at", 1, func(n *node) any { return timeOrNil(n.ProvisionUpdatedAt) }},
	{"raid_config", 12, func(n *node) any { return map[string]any{} }},
	{"raid_interface", 31, ifaceGetter("raid")},
	{"rescue_interface", 38, ifaceGetter("rescue")},
	{"reservation", 1, func(n *node) any { return strOrNil(n.Reservation) }},
	{"resource_class", 21, func(n *node) any {
		if n.ResourceClass == nil {
			return nil
		}
		return *n.ResourceClass
	}},
	{"retired", 61, func(n *node) any { return n.Retired }},
	{"retired_reason", 61, func(n *node) any { return strOrNil(n.RetiredReason) }},
	{"secure_boot", 75, func(n *node) any { return nil }},
	{"shard", 82, func(n *node) any { return strOrNil(n.Shard) }},
	{"storage_interface", 33, ifaceGetter("storage")},
	{"target_power_state", 1, func(n *node) any { return strOrNil(n.TargetPowerState) }},
	{"target_provision_state", 1, func(n *node) any { return strOrNil(n.TargetProvisionState) }},
	{"target_raid_config", 12, func(n *node) any { return map[string]any{} }},
	{"traits", 37, func(n *node) any {
		if n.Traits == nil {
			return []string{}
		}
		return n.Traits
	}},
	{"vendor_interface", 31, ifaceGetter("vendor")},
	{"allocation_uuid", 52, func(n *node) any { return nil }},
	{"chassis_uuid", 1, func(n *node) any { return strOrNil(n.ChassisUUID) }},
	{"conductor", 49, func(n *node) any { return "localhost" }},
}

var nodeFieldByName = func() map[string]*nodeField {
	m := make(map[string]*nodeField, len(nodeFields))
	for i := range nodeFields {
		m[nodeFields[i].name] = &nodeFields[i]
	}
	return m
}()

// queryableFields are the names accepted in ?fields= (created_at and
// updated_at are not: "Field created_at is not a valid field.").
func queryableField(name string) bool {
	if name == "created_at" || name == "updated_at" {
		return false
	}
	_, ok := nodeFieldByName[name]
	return ok
}

// checkFieldsVersion answers 406 when a requested field is newer than the
// request's microversion (check_allowed_fields).
func checkFieldsVersion(fields []string, ver int) *apiErr {
	for _, f := range fields {
		if nf, ok := nodeFieldByName[f]; ok && nf.min > ver {
			return errNotAcceptable()
		}
		if f == "events" && ver < 54 {
			return errNotAcceptable()
		}
	}
	return nil
}

// checkFieldsValid mirrors the per-node validation of node_convert_with_links.
func checkFieldsValid(fields []string) *apiErr {
	for _, f := range fields {
		if !queryableField(f) {
			return badRequest("Field %s is not a valid field.", f)
		}
	}
	return nil
}

// renderNode builds a node body as Ironic shows it at microversion ver.
// fields nil means all fields, with the ports/states/portgroups/volume links.
func renderNode(n *node, fields []string, ver int, base string) map[string]any {
	var m map[string]any
	if fields == nil {
		m = make(map[string]any, len(nodeFields)+5)
		for i := range nodeFields {
			f := &nodeFields[i]
			if f.min <= ver {
				m[f.name] = f.get(n)
			}
		}
		m["ports"] = links(base, "nodes", n.UUID+"/ports")
		if ver >= 14 {
			m["states"] = links(base, "nodes", n.UUID+"/states")
		}
		if ver >= 24 {
			m["portgroups"] = links(base, "nodes", n.UUID+"/portgroups")
		}
		if ver >= 32 {
			m["volume"] = links(base, "nodes", n.UUID+"/volume")
		}
	} else {
		m = make(map[string]any, len(fields)+1)
		for _, name := range fields {
			if f := nodeFieldByName[name]; f != nil && f.min <= ver {
				m[name] = f.get(n)
			}
		}
	}
	// NOTE: below 1.2 "available" is shown as null (docs/ironic.md §0).
	if ver < 2 && n.ProvisionState == stateAvailable {
		if _, ok := m["provision_state"]; ok {
			m["provision_state"] = nil
		}
	}
	m["links"] = links(base, "nodes", n.UUID)
	return m
}

// maskInstanceInfo hides secrets as Ironic does for callers without
// show_instance_secrets: configdrive and image_url become "******".
func maskInstanceInfo(in map[string]any) any {
	if len(in) == 0 {
		return map[string]any{}
	}
	out := maskSecrets(in).(map[string]any)
	if v, ok := out["configdrive"]; ok && truthy(v) {
		out["configdrive"] = "******"
	}
	if v, ok := out["image_url"]; ok && truthy(v) {
		out["image_url"] = "******"
	}
	return out
}

// secretKeys are the key fragments oslo's mask_dict_password hides.
var secretKeys = []string{"password", "secret", "token"}

func maskSecrets(in map[string]any) any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		lk := strings.ToLower(k)
		masked := false
		for _, frag := range secretKeys {
			if strings.Contains(lk, frag) {
				if _, isStr := v.(string); isStr {
					out[k] = "******"
					masked = true
				}
				break
			}
		}
		if !masked {
			out[k] = v
		}
	}
	return out
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	case float64:
		return x != 0
	}
	return true
}
