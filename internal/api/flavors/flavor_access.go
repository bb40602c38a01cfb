package flavors

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// os-flavor-access and os-extra_specs writes (flavor_manage.go has the rest).

type accessView struct {
	FlavorID string `json:"flavor_id"`
	TenantID string `json:"tenant_id"`
}

type accessBody struct {
	FlavorAccess []accessView `json:"flavor_access"`
}

func (s *Service) accessList(r *core.Request, id string) (accessBody, error) {
	projects, err := s.Cfg.Store.FlavorAccess(r.Context(), id)
	if err != nil {
		return accessBody{}, s.flavorWriteErr(err, id)
	}
	out := make([]accessView, 0, len(projects))
	for _, p := range projects {
		out = append(out, accessView{FlavorID: id, TenantID: p})
	}
	return accessBody{FlavorAccess: out}, nil
}

func (s *Service) listFlavorAccess(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.FlavorAccessList, r.Own()); err != nil {
		return err
	}
	id := r.PathValue("id")
	f, err := s.Cfg.Store.GetFlavor(r.Context(), id)
	if err != nil {
		return s.flavorWriteErr(err, id)
	}
	if f.IsPublic {
		return core.NotFound("Access list not available for public flavors.")
	}
	body, err := s.accessList(r, id)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, body)
	return nil
}

// flavorAction is POST /flavors/{id}/action: addTenantAccess and
// removeTenantAccess, each {"tenant": project}.
func (s *Service) flavorAction(w http.ResponseWriter, r *core.Request) error {
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		r.Authorized = true
		return err
	}
	if len(top) != 1 {
		r.Authorized = true
		return core.BadRequest("Invalid input for field/attribute action: want one of addTenantAccess, removeTenantAccess.")
	}
	var action string
	var raw json.RawMessage
	for action, raw = range top {
	}
	rule := map[string]string{"addTenantAccess": policy.FlavorAccessAdd, "removeTenantAccess": policy.FlavorAccessRemove}[action]
	if rule == "" {
		r.Authorized = true
		return core.BadRequest("There is no such action: %s", action)
	}
	if err := r.Authorize(rule, r.Own()); err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil || len(fields) != 1 {
		return core.BadRequest("Invalid input for field/attribute %s: want {\"tenant\": project}.", action)
	}
	tenant, err := core.RequiredString(fields, "tenant", 255)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	f, err := s.Cfg.Store.GetFlavor(r.Context(), id)
	if err != nil {
		return s.flavorWriteErr(err, id)
	}
	if action == "addTenantAccess" {
		if f.IsPublic {
			return core.Conflict("Can not add access to a public flavor.")
		}
		err = s.Cfg.Store.AddFlavorAccess(r.Context(), id, tenant)
		if errors.Is(err, store.ErrExists) {
			return core.Conflict("Flavor access already exists for flavor %s and project %s combination.", id, tenant)
		}
	} else {
		err = s.Cfg.Store.RemoveFlavorAccess(r.Context(), id, tenant)
		if errors.Is(err, store.ErrNotFound) {
			return core.NotFound("Flavor access not found for %s / %s combination.", id, tenant)
		}
	}
	if err != nil {
		return s.flavorWriteErr(err, id)
	}
	body, err := s.accessList(r, id)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, body)
	return nil
}

var (
	specKeyRE   = regexp.MustCompile(`^[a-zA-Z0-9-_:. ]{1,255}$`)
	placementRE = regexp.MustCompile(`^[A-Z0-9_]{1,255}$`)
)

// specValue reads an extra spec value: a string, number or boolean (Nova
// stores its text), at most 255 characters.
func specValue(key string, raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", core.BadRequest("Invalid input for field/attribute %s. Value: %s.", key, raw)
	}
	var str string
	switch t := v.(type) {
	case string:
		str = t
	case float64:
		str = strings.TrimSpace(string(raw))
	case bool:
		str = map[bool]string{true: "True", false: "False"}[t]
	default:
		return "", core.BadRequest("Invalid input for field/attribute %s. Value: %s. It is not of type 'string', 'number', 'boolean'.", key, raw)
	}
	if len([]rune(str)) > 255 {
		return "", core.BadRequest("Invalid input for field/attribute %s: it is longer than 255 characters.", key)
	}
	// Nova takes any string; a control character (a NUL PostgreSQL
	// refuses, an ESC a terminal obeys) is refused here.
	if core.HasControl(str) {
		return "", core.BadRequest("Invalid input for field/attribute %s: it must not contain control characters.", key)
	}
	return str, nil
}

// checkSpec validates what ingot's scheduler reads, as Nova's extra spec
// validators do: resources:<CLASS> takes a non-negative integer,
// trait:<NAME> required or forbidden, capabilities:<key> any value. Other
// namespaces (hw:, aggregate_instance_extra_specs:, …) are stored as given.
func checkSpec(key, value string) error {
	if !specKeyRE.MatchString(key) {
		return core.BadRequest("Invalid input for field/attribute extra_specs. Key %q must be 1 to 255 letters, digits, '-', '_', ':', '.' or ' '.", key)
	}
	ns, name, _ := strings.Cut(key, ":")
	switch ns {
	case "resources":
		if !placementRE.MatchString(name) {
			return core.BadRequest("Validation failed; extra spec %s: the resource class must be a standard one or CUSTOM_ in upper case.", key)
		}
		if n, err := strconv.Atoi(value); err != nil || n < 0 {
			return core.BadRequest("Validation failed; extra spec %s: the value %q must be a non-negative integer.", key, value)
		}
	case "trait":
		if !placementRE.MatchString(name) {
			return core.BadRequest("Validation failed; extra spec %s: the trait must be a standard one or CUSTOM_ in upper case.", key)
		}
		if value != "required" && value != "forbidden" {
			return core.BadRequest("Validation failed; extra spec %s: the value %q is not one of required, forbidden.", key, value)
		}
	case "capabilities":
		if name == "" {
			return core.BadRequest("Validation failed; extra spec %s: a capability needs a name.", key)
		}
	}
	return nil
}

// setSpecs merges specs into a flavor's and recomputes its Ironic class.
func (s *Service) setSpecs(r *core.Request, id string, specs map[string]string, drop string) (store.Flavor, error) {
	if _, err := s.managed(r, id); err != nil {
		return store.Flavor{}, err
	}
	f, err := s.Cfg.Store.UpdateFlavor(r.Context(), id, func(f *store.Flavor) error {
		if f.Seeded {
			return core.Conflict("Flavor %s is defined in ingot's configuration file; change it there.", id)
		}
		if f.ExtraSpecs == nil {
			f.ExtraSpecs = map[string]string{}
		}
		for k, v := range specs {
			f.ExtraSpecs[k] = v
		}
		if drop != "" {
			if _, ok := f.ExtraSpecs[drop]; !ok {
				return core.NotFound("Flavor %s has no extra specs with key %s.", id, drop)
			}
			delete(f.ExtraSpecs, drop)
		}
		f.ResourceClass = s.ironicClass(r, f.ExtraSpecs)
		return nil
	})
	if err != nil {
		return f, s.flavorWriteErr(err, id)
	}
	return f, nil
}

func (s *Service) createExtraSpecs(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.FlavorExtraSpecsCreate, r.Own()); err != nil {
		return err
	}
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(top["extra_specs"], &fields) != nil || fields == nil || len(top) != 1 {
		return core.BadRequest("Invalid input for field/attribute extra_specs: want {\"extra_specs\": {key: value, …}}.")
	}
	specs := map[string]string{}
	for k, raw := range fields {
		v, err := specValue(k, raw)
		if err != nil {
			return err
		}
		if err := checkSpec(k, v); err != nil {
			return err
		}
		specs[k] = v
	}
	if _, err := s.setSpecs(r, r.PathValue("id"), specs, ""); err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, extraSpecsBody{ExtraSpecs: specs})
	return nil
}

func (s *Service) updateExtraSpec(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.FlavorExtraSpecsUpdate, r.Own()); err != nil {
		return err
	}
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	if len(top) > 1 {
		return core.BadRequest("Request body contains too many items.")
	}
	raw, ok := top[key]
	if !ok {
		return core.BadRequest("Request body and URI mismatch")
	}
	v, err := specValue(key, raw)
	if err != nil {
		return err
	}
	if err := checkSpec(key, v); err != nil {
		return err
	}
	if _, err := s.setSpecs(r, r.PathValue("id"), map[string]string{key: v}, ""); err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, map[string]string{key: v})
	return nil
}

func (s *Service) deleteExtraSpec(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.FlavorExtraSpecsDelete, r.Own()); err != nil {
		return err
	}
	if _, err := s.setSpecs(r, r.PathValue("id"), nil, r.PathValue("key")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
