package quotas

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// os-quota-class-sets: a class's limits over the configured defaults. Only
// the "default" class counts: its limits are the defaults every project
// gets (defaultLimits), under the project's own overrides. Other classes
// are stored and shown, as Nova's, and apply to nobody. The network proxy
// limits (fixed and floating IPs, security groups) are stored and shown for
// the class too, so a client that sets every member reads them back, and
// they limit nothing.

func (s *Service) ClassRoutes() {
	s.Compute("GET /v2.1/os-quota-class-sets/{id}", s.showQuotaClass)
	s.Compute("PUT /v2.1/os-quota-class-sets/{id}", s.updateQuotaClass)
}

// DefaultLimits are the configured defaults overlaid with the default
// class. Read before a create's transaction: a create racing a class change
// counts against the limits before it.
func (s *Service) DefaultLimits(r *core.Request) (store.Limits, error) {
	class, err := s.Cfg.Store.QuotaClass(r.Context(), store.DefaultQuotaClass)
	if err != nil {
		return nil, fmt.Errorf("default quota class: %w", err)
	}
	out := maps.Clone(s.Cfg.Quotas)
	if out == nil {
		out = store.Limits{}
	}
	maps.Copy(out, class)
	return out, nil
}

// quotaClassKeys are a class set's members at mv: the network members until
// 2.49, the server group members from 2.50, the personality members until
// 2.56 (Nova's filters; unlike os-quota-sets, server groups are hidden
// before 2.50).
func quotaClassKeys(mv core.Version) []string {
	keys := []string{store.ResInstances, store.ResCores, store.ResRAM, store.ResKeyPairs, store.ResMetadataItems}
	if mv.AtLeast(mvGroupQuotaClasses) {
		keys = append(keys, store.ResServerGroups, store.ResServerGroupMembers)
	} else {
		keys = append(keys, "fixed_ips", "floating_ips", "security_groups", "security_group_rules")
	}
	if !mv.AtLeast(mvNoPersonality) {
		keys = append(keys, ResInjectedFiles, ResInjectedFileContentBytes, ResInjectedFilePathBytes)
	}
	return keys
}

func quotaClassName(r *core.Request) (string, error) {
	id := r.PathValue("id")
	if n := utf8.RuneCountInString(id); n < 1 || n > 255 {
		return "", core.BadRequest("Invalid input for field/attribute quota_class_name: it must be 1 to 255 characters.")
	}
	return id, nil
}

// quotaClassSet renders class's limits over the configured defaults.
func (s *Service) quotaClassSet(r *core.Request, class string, withID bool) (map[string]any, error) {
	stored, err := s.Cfg.Store.QuotaClass(r.Context(), class)
	if err != nil {
		return nil, fmt.Errorf("quota class %s: %w", class, err)
	}
	out := map[string]any{}
	if withID {
		out["id"] = class
	}
	for _, k := range quotaClassKeys(r.MV) {
		v := limitOf(s.Cfg.Quotas, k)
		if sv, ok := stored[k]; ok {
			v = sv
		}
		out[k] = v
	}
	return out, nil
}

func (s *Service) showQuotaClass(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.QuotaClassShow, r.Own()); err != nil {
		return err
	}
	class, err := quotaClassName(r)
	if err != nil {
		return err
	}
	set, err := s.quotaClassSet(r, class, true)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, struct {
		QuotaClassSet map[string]any `json:"quota_class_set"`
	}{set})
	return nil
}

// updateQuotaClass takes the members of the microversion's set (server
// groups at any microversion, as Nova's 2.1 schema), each an integer from
// -1 to 2^31-1.
func (s *Service) updateQuotaClass(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.QuotaClassUpdate, r.Own()); err != nil {
		return err
	}
	class, err := quotaClassName(r)
	if err != nil {
		return err
	}
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(top["quota_class_set"], &fields); err != nil || fields == nil || len(top) != 1 {
		return core.BadRequest("Invalid input for field/attribute quota_class_set: want {\"quota_class_set\": {resource: limit, …}}.")
	}
	settable := quotaClassKeys(r.MV)
	if !r.MV.AtLeast(mvGroupQuotaClasses) {
		settable = append(settable, store.ResServerGroups, store.ResServerGroupMembers)
	}
	limits := store.Limits{}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(settable, k) {
			return core.BadRequest("Invalid input for field/attribute quota_class_set. Additional properties are not allowed ('%s' was unexpected).", k)
		}
		v, err := quotaLimitValue(k, fields[k])
		if err != nil {
			return err
		}
		limits[k] = v
	}
	if err := s.Cfg.Store.SetQuotaClass(r.Context(), class, limits); err != nil {
		return fmt.Errorf("set quota class %s: %w", class, err)
	}
	set, err := s.quotaClassSet(r, class, false)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, struct {
		QuotaClassSet map[string]any `json:"quota_class_set"`
	}{set})
	return nil
}
