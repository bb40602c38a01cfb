package quotas

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/api/volume"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// Quotas and limits in Nova's shapes (os-quota-sets, /limits), plus the
// read-only Cinder and Neutron quota sets `openstack quota show` reads when
// ingot's volume and network endpoints are in the catalog.

// DefaultQuotas are the limits when the configuration gives none.
func DefaultQuotas() store.Limits {
	return store.Limits{store.ResInstances: store.Unlimited, store.ResCores: store.Unlimited,
		store.ResRAM: store.Unlimited, store.ResKeyPairs: 100, store.ResMetadataItems: 128}
}

// ProjectLimits is a project's limits: the defaults with its overrides.
func (s *Service) ProjectLimits(r *core.Request, project string) (store.Limits, error) {
	over, err := s.Cfg.Store.QuotaOverrides(r.Context(), project)
	if err != nil {
		return nil, fmt.Errorf("quotas of %s: %w", project, err)
	}
	out, err := s.DefaultLimits(r)
	if err != nil {
		return nil, err
	}
	for k, v := range over {
		out[k] = v
	}
	return out, nil
}

// quotaKeys are the members of a quota set at mv, as Nova's filters: the
// network proxy ones until 2.35, the personality ones until 2.56.
func quotaKeys(mv core.Version) []string {
	keys := []string{store.ResInstances, store.ResCores, store.ResRAM, store.ResKeyPairs, store.ResMetadataItems,
		"server_groups", "server_group_members"}
	if !mv.AtLeast(mvNoProxyQuotas) {
		keys = append(keys, "fixed_ips", "floating_ips", "security_groups", "security_group_rules")
	}
	if !mv.AtLeast(mvNoPersonality) {
		keys = append(keys, ResInjectedFiles, ResInjectedFileContentBytes, ResInjectedFilePathBytes)
	}
	return keys
}

// The personality (injected file) quotas, shown until 2.56.
const (
	ResInjectedFiles            = "injected_files"
	ResInjectedFileContentBytes = "injected_file_content_bytes"
	ResInjectedFilePathBytes    = "injected_file_path_bytes"
)

// limitOf is res's limit in l, or Nova's default for it: the personality
// quotas' (5 files, 10240 bytes each, paths of 255), otherwise unlimited
// (the network proxy quotas, stored and shown as Nova does, limit nothing).
func limitOf(l store.Limits, res string) int {
	if v, ok := l[res]; ok {
		return v
	}
	switch res {
	case ResInjectedFiles:
		return 5
	case ResInjectedFileContentBytes:
		return 10240
	case ResInjectedFilePathBytes:
		return 255
	}
	return store.Unlimited
}

// PersonalityLimits are project's limits on injected files: how many, the
// bytes of each, the bytes of each path.
func (s *Service) PersonalityLimits(r *core.Request, project string) (files, content, path int, err error) {
	l, err := s.ProjectLimits(r, project)
	if err != nil {
		return 0, 0, 0, err
	}
	return limitOf(l, ResInjectedFiles), limitOf(l, ResInjectedFileContentBytes), limitOf(l, ResInjectedFilePathBytes), nil
}

// quotaSetBody wraps a quota set: a map, as its members are the
// microversion's resources and the project's custom resource classes.
type quotaSetBody struct {
	QuotaSet map[string]any `json:"quota_set"`
}

// limitsBody is GET /limits (Nova's and Cinder's): absolute limits, no
// rate limits.
type limitsBody struct {
	Limits struct {
		Absolute map[string]int `json:"absolute"`
		Rate     []any          `json:"rate"`
	} `json:"limits"`
}

func newLimitsBody(abs map[string]int) limitsBody {
	var b limitsBody
	b.Limits.Absolute, b.Limits.Rate = abs, []any{}
	return b
}

// quotaSet renders limits (and, for detail, usage) of project.
func (s *Service) quotaSet(r *core.Request, project string, limits store.Limits, u *store.Usage, keypairs int) map[string]any {
	out := map[string]any{}
	if project != "" {
		out["id"] = project
	}
	keys := quotaKeys(r.MV)
	for res := range limits {
		if strings.HasPrefix(res, store.ClassPrefix) {
			keys = append(keys, res)
		}
	}
	for _, res := range keys {
		lim := limitOf(limits, res)
		if u == nil {
			out[res] = lim
			continue
		}
		inUse := u.Of(res)
		if res == store.ResKeyPairs {
			inUse = keypairs
		}
		out[res] = map[string]int{"in_use": inUse, "limit": lim, "reserved": 0}
	}
	return out
}

func (s *Service) ShowQuotas(w http.ResponseWriter, r *core.Request) error {
	project := r.PathValue("project")
	detail := strings.HasSuffix(r.URL.Path, "/detail")
	rule := policy.QuotaShow
	if detail {
		rule = policy.QuotaDetail
	}
	if err := r.Authorize(rule, core.Target(project, r.URL.Query().Get("user_id"))); err != nil {
		return err
	}
	limits, err := s.ProjectLimits(r, project)
	if err != nil {
		return err
	}
	var u *store.Usage
	keypairs := 0
	if detail {
		usage, err := s.Cfg.Store.Usage(r.Context(), project)
		if err != nil {
			return fmt.Errorf("usage of %s: %w", project, err)
		}
		u = &usage
		if project == r.Ident.ProjectID {
			if keypairs, err = s.Cfg.Store.CountKeypairs(r.Context(), r.Ident.UserID); err != nil {
				return fmt.Errorf("keypairs: %w", err)
			}
		}
	}
	core.WriteJSON(w, http.StatusOK, quotaSetBody{QuotaSet: s.quotaSet(r, project, limits, u, keypairs)})
	return nil
}

func (s *Service) QuotaDefaults(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.QuotaDefaults, r.Own()); err != nil {
		return err
	}
	defaults, err := s.DefaultLimits(r)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, quotaSetBody{QuotaSet: s.quotaSet(r, r.PathValue("project"), defaults, nil, 0)})
	return nil
}

func (s *Service) DeleteQuotas(w http.ResponseWriter, r *core.Request) error {
	project := r.PathValue("project")
	if err := r.Authorize(policy.QuotaDelete, core.Target(project, "")); err != nil {
		return err
	}
	if err := s.Cfg.Store.DeleteQuotas(r.Context(), project); err != nil {
		return fmt.Errorf("delete quotas of %s: %w", project, err)
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// UpdateQuotas sets a project's limits (admin). A limit below what the
// project already uses is refused unless force is true, as in Nova.
func (s *Service) UpdateQuotas(w http.ResponseWriter, r *core.Request) error {
	project := r.PathValue("project")
	if err := r.Authorize(policy.QuotaUpdate, core.Target(project, "")); err != nil {
		return err
	}
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(top["quota_set"], &fields); err != nil || fields == nil || len(top) != 1 {
		return core.BadRequest("Invalid input for field/attribute quota_set: want {\"quota_set\": {resource: limit, …}}.")
	}
	force, err := core.BoolValue(fields["force"], "force")
	if err != nil {
		return err
	}
	delete(fields, "force")
	settable := map[string]bool{}
	for _, k := range quotaKeys(r.MV) {
		settable[k] = true
	}
	limits := store.Limits{}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !settable[k] && !(strings.HasPrefix(k, store.ClassPrefix) && len(k) > len(store.ClassPrefix) && len(k) <= 255) {
			return core.BadRequest("Invalid input for field/attribute quota_set. Additional properties are not allowed ('%s' was unexpected).", k)
		}
		v, err := quotaLimitValue(k, fields[k])
		if err != nil {
			return err
		}
		limits[k] = v
	}
	if !force {
		u, err := s.Cfg.Store.Usage(r.Context(), project)
		if err != nil {
			return fmt.Errorf("usage of %s: %w", project, err)
		}
		for _, k := range names {
			if lim, ok := limits[k]; ok && lim >= 0 && u.Of(k) > lim {
				return core.BadRequest("Quota limit %d for %s must be greater than or equal to already used and reserved %d.", lim, k, u.Of(k))
			}
		}
	}
	if err := s.Cfg.Store.SetQuotas(r.Context(), project, limits); err != nil {
		return fmt.Errorf("set quotas of %s: %w", project, err)
	}
	all, err := s.ProjectLimits(r, project)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, quotaSetBody{QuotaSet: s.quotaSet(r, "", all, nil, 0)})
	return nil
}

// quotaLimitValue reads one limit: an integer from -1 to 2^31-1.
func quotaLimitValue(k string, raw json.RawMessage) (int, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, core.BadRequest("Invalid input for field/attribute %s. Value: %s. It is not an integer.", k, raw)
	}
	v, err := n.Int64()
	if err != nil || v < -1 || v > 1<<31-1 {
		return 0, core.BadRequest("Invalid input for field/attribute %s. Value: %s. It must be an integer from -1 to %d.", k, raw, 1<<31-1)
	}
	return int(v), nil
}

// Limits answers GET /limits: the absolute limits of the caller's project
// (or, for an admin, of tenant_id) with its usage; no rate limits.
func (s *Service) Limits(w http.ResponseWriter, r *core.Request) error {
	project := r.Ident.ProjectID
	if t := r.URL.Query().Get("tenant_id"); t != "" && t != project {
		if err := r.Authorize(policy.LimitsOtherProject, core.Target(t, "")); err != nil {
			return err
		}
		project = t
	} else if err := r.Authorize(policy.Limits, r.Own()); err != nil {
		return err
	}
	lim, err := s.ProjectLimits(r, project)
	if err != nil {
		return err
	}
	u, err := s.Cfg.Store.Usage(r.Context(), project)
	if err != nil {
		return fmt.Errorf("usage of %s: %w", project, err)
	}
	abs := map[string]int{
		"maxServerMeta": lim.Get(store.ResMetadataItems), "maxTotalInstances": lim.Get(store.ResInstances),
		"maxTotalKeypairs": lim.Get(store.ResKeyPairs), "maxServerGroups": lim.Get(store.ResServerGroups),
		"maxServerGroupMembers": lim.Get(store.ResServerGroupMembers), "maxTotalCores": lim.Get(store.ResCores),
		"maxTotalRAMSize": lim.Get(store.ResRAM), "totalInstancesUsed": u.Instances,
		"totalCoresUsed": u.Cores, "totalRAMUsed": u.RAM, "totalServerGroupsUsed": 0,
	}
	if groups, err := s.Cfg.Store.ListServerGroups(r.Context(), project); err == nil {
		abs["totalServerGroupsUsed"] = len(groups)
	}
	if !r.MV.AtLeast(mvNoProxyQuotas) {
		abs["maxSecurityGroups"], abs["maxSecurityGroupRules"], abs["maxTotalFloatingIps"] = store.Unlimited, store.Unlimited, store.Unlimited
		abs["totalFloatingIpsUsed"], abs["totalSecurityGroupsUsed"] = 0, 0
	}
	if !r.MV.AtLeast(mvNoImageMetaLimit) {
		abs["maxImageMeta"] = 128
	}
	if !r.MV.AtLeast(mvNoPersonality) {
		abs["maxPersonality"], abs["maxPersonalitySize"] = limitOf(lim, ResInjectedFiles), limitOf(lim, ResInjectedFileContentBytes)
	}
	core.WriteJSON(w, http.StatusOK, newLimitsBody(abs))
	return nil
}

// VolumeQuotas is Cinder's quota set of the embedded registry: nothing
// limits volumes, and there are no snapshots, backups or groups.
func (s *Service) VolumeQuotas(w http.ResponseWriter, r *core.Request) error {
	if err := s.volume.VolumeProject(r, ""); err != nil {
		return err
	}
	t := r.PathValue("target")
	if err := r.Authorize(policy.VolumeQuota, core.Target(t, "")); err != nil {
		return err
	}
	var body struct {
		QuotaSet struct {
			BackupGigabytes    int    `json:"backup_gigabytes"`
			Backups            int    `json:"backups"`
			Gigabytes          int    `json:"gigabytes"`
			Groups             int    `json:"groups"`
			ID                 string `json:"id"`
			PerVolumeGigabytes int    `json:"per_volume_gigabytes"`
			Snapshots          int    `json:"snapshots"`
			Volumes            int    `json:"volumes"`
		} `json:"quota_set"`
	}
	q := &body.QuotaSet
	q.ID, q.Volumes, q.Gigabytes, q.PerVolumeGigabytes = t, store.Unlimited, store.Unlimited, store.Unlimited
	core.WriteJSON(w, http.StatusOK, body)
	return nil
}

// VolumeLimits is Cinder's GET /limits of the caller's project: the
// volumes and gigabytes it holds, none of them limited.
func (s *Service) VolumeLimits(w http.ResponseWriter, r *core.Request) error {
	if err := s.volume.VolumeProject(r, policy.VolumeLimits); err != nil {
		return err
	}
	vols, gb, after := 0, 0, ""
	for {
		page, err := s.Cfg.Store.ListProjectVolumes(r.Context(), r.Ident.ProjectID, after, volume.DefaultVolumePage)
		if err != nil {
			return fmt.Errorf("volumes of %s: %w", r.Ident.ProjectID, err)
		}
		for _, v := range page {
			vols, gb = vols+1, gb+v.SizeGB
		}
		if len(page) < volume.DefaultVolumePage {
			break
		}
		after = page[len(page)-1].ID
	}
	core.WriteJSON(w, http.StatusOK, newLimitsBody(map[string]int{
		"maxTotalVolumes": store.Unlimited, "maxTotalVolumeGigabytes": store.Unlimited, "maxTotalSnapshots": 0,
		"maxTotalBackups": 0, "maxTotalBackupGigabytes": 0, "totalVolumesUsed": vols, "totalGigabytesUsed": gb,
		"totalSnapshotsUsed": 0, "totalBackupsUsed": 0, "totalBackupGigabytesUsed": 0}))
	return nil
}

// NetworkQuotas is Neutron's quota of the configured networks: ports are
// what servers take (unlimited), the rest ingot does not create.
func (s *Service) NetworkQuotas(w http.ResponseWriter, r *core.Request) error {
	project := r.PathValue("project")
	if err := r.Authorize(policy.NetworkQuota, core.Target(project, "")); err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, map[string]map[string]int{"quota": {
		"network": 0, "subnet": 0, "subnetpool": 0, "port": store.Unlimited, "router": 0, "floatingip": 0,
		"security_group": 0, "security_group_rule": 0, "rbac_policy": 0}})
	return nil
}
