package servers

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// The list filters of the update paths automation converges with: tags
// (2.26), changes-since (and changes-before from 2.66), and sort_key /
// sort_dir, with Nova's validation.

// sortFields maps Nova's sort keys to the store's fields. Nova's other
// valid keys (availability_zone, config_drive, vm_state, hostname, …) are
// accepted and order nothing here: their value is the same for every
// server of ingot, or is not a column of the store (docs/clients.md).
var sortFields = map[string]store.SortField{
	"created_at": store.SortCreatedAt, "updated_at": store.SortUpdatedAt, "launched_at": store.SortLaunchedAt,
	"display_name": store.SortName, "uuid": store.SortID, "project_id": store.SortProjectID,
	"user_id": store.SortUserID, "node": store.SortNodeID, "host": store.SortNodeID,
}

// novaSortKeys are Nova's valid sort keys (VALID_SORT_KEYS); ignoredSortKeys
// were valid once and are dropped silently before 2.75, refused from it.
var (
	novaSortKeys = []string{"access_ip_v4", "access_ip_v6", "auto_disk_config", "availability_zone", "config_drive",
		"created_at", "display_description", "display_name", "host", "hostname", "image_ref", "instance_type_id",
		"kernel_id", "key_name", "launch_index", "launched_at", "locked_by", "node", "power_state", "progress",
		"project_id", "ramdisk_id", "root_device_name", "task_state", "terminated_at", "updated_at", "user_id",
		"uuid", "vm_state"}
	ignoredSortKeys = []string{"architecture", "cell_name", "cleaned", "default_ephemeral_device",
		"default_swap_device", "deleted", "deleted_at", "disable_terminate", "ephemeral_gb", "ephemeral_key_uuid",
		"id", "key_data", "launched_on", "locked", "memory_mb", "os_type", "reservation_id", "root_gb",
		"shutdown_terminate", "user_data", "vcpus", "vm_mode"}
)

// parseSort reads sort_key and sort_dir as Nova does: several of each,
// paired in order; missing directions take the first one given (desc when
// none is); an unknown key, or one dropped from 2.75, is a 400; host and
// node are for admins (403). Without either parameter the order is
// ingot's default (creation, oldest first).
func parseSort(r *core.Request, q url.Values) ([]store.SortKey, error) {
	keys, dirs := q["sort_key"], q["sort_dir"]
	if len(keys) == 0 && len(dirs) == 0 {
		return nil, nil
	}
	for i := range keys {
		keys[i] = strings.TrimSpace(keys[i])
	}
	for i := range dirs {
		dirs[i] = strings.TrimSpace(dirs[i])
		if dirs[i] != "asc" && dirs[i] != "desc" {
			return nil, core.BadRequest("Invalid input received: Unknown sort direction, must be 'desc' or 'asc'")
		}
	}
	if len(dirs) > max(len(keys), 1) {
		return nil, core.BadRequest("Invalid input received: Sort direction size exceeds sort key size")
	}
	for _, k := range keys {
		ignored := slices.Contains(ignoredSortKeys, k) && !(k == "locked" && r.MV.AtLeast(mvLockReason))
		valid := slices.Contains(novaSortKeys, k) || (k == "locked" && r.MV.AtLeast(mvLockReason)) || (ignored && !r.MV.AtLeast(mvAPICleanup))
		if !valid {
			return nil, core.BadRequest("Invalid input for query parameters sort_key. Value: %s. '%s' is not one of the valid sort keys.", k, k)
		}
	}
	if len(keys) == 0 {
		keys = []string{"created_at"}
	}
	first := "desc"
	if len(dirs) > 0 {
		first = dirs[0]
	}
	var out []store.SortKey
	for i, k := range keys {
		d := first
		if i < len(dirs) {
			d = dirs[i]
		}
		if (k == "host" || k == "node") && !r.Can(policy.ContextIsAdmin, r.Own()) {
			return nil, core.Forbidden("Only administrators can sort servers by %s", k)
		}
		if f, ok := sortFields[k]; ok && !slices.ContainsFunc(out, func(s store.SortKey) bool { return s.Field == f }) {
			out = append(out, store.SortKey{Field: f, Desc: d == "desc"})
		}
	}
	// Nova ends every order with created_at and id in the first direction.
	for _, f := range []store.SortField{store.SortCreatedAt, store.SortID} {
		if !slices.ContainsFunc(out, func(s store.SortKey) bool { return s.Field == f }) {
			out = append(out, store.SortKey{Field: f, Desc: first == "desc"})
		}
	}
	return out, nil
}

// parseChanges reads changes-since (every microversion) and changes-before
// (2.66): servers updated at or after / at or before, deleted ones
// included, as Nova lists them.
func parseChanges(r *core.Request, q url.Values, opts *store.ListOptions) error {
	var err error
	if v := q.Get("changes-since"); q.Has("changes-since") {
		if opts.ChangesSince, err = parseISOTime("changes-since", v); err != nil {
			return err
		}
	}
	if v := q.Get("changes-before"); q.Has("changes-before") && r.MV.AtLeast(mvChangesBefore) {
		if opts.ChangesBefore, err = parseISOTime("changes-before", v); err != nil {
			return err
		}
		if !opts.ChangesSince.IsZero() && opts.ChangesBefore.Before(opts.ChangesSince) {
			return core.BadRequest("The value of changes-since must be less than or equal to changes-before.")
		}
	}
	// Nova lists deleted servers with changes-since or -before, and to the
	// status filter DELETED (the only status they show).
	opts.IncludeDeleted = opts.Status == "DELETED" || !opts.ChangesSince.IsZero() || !opts.ChangesBefore.IsZero()
	return nil
}

// isoLayouts are the ISO 8601 forms oslo's parse_isotime reads; one
// without a zone is UTC.
var isoLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04Z07:00",
	"2006-01-02T15:04", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02"}

func parseISOTime(param, v string) (time.Time, error) {
	for _, l := range isoLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, core.BadRequest("Invalid input for query parameters %s. Value: %s. '%s' is not a 'date-time'", param, v, v)
}

// parseTagFilters reads tags, tags-any, not-tags and not-tags-any (2.26),
// each a comma-separated list, as Nova splits them.
func parseTagFilters(r *core.Request, q url.Values, opts *store.ListOptions) {
	if !r.MV.AtLeast(mvTags) {
		return
	}
	for _, f := range []struct {
		param string
		dst   *[]string
	}{{"tags", &opts.Tags}, {"tags-any", &opts.TagsAny}, {"not-tags", &opts.NotTags}, {"not-tags-any", &opts.NotTagsAny}} {
		if q.Has(f.param) {
			*f.dst = strings.Split(q.Get(f.param), ",")
		}
	}
}

// listStatus maps the status filter: a status ingot's servers show goes to
// the store; refine says whether the store's answer must be checked
// against lifecycle.Nova (a phase that can show it may show another status
// while an operation is pending; see lifecycle.StatusExact).
func listStatus(st string) (status string, refine, shown bool) {
	if lifecycle.StatusPhases(st) == nil {
		return "", false, false
	}
	return st, !lifecycle.StatusExact(st), true
}

// statusMatch is the refinement of a status filter.
func statusMatch(status string) func(*lifecycle.Server) bool {
	return func(sv *lifecycle.Server) bool { return lifecycle.Nova(sv).Status == status }
}
