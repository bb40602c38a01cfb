package flavors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// Flavor management for admins. Flavors live in the store; the configured
// ones (the configuration file's flavors) are the seed, upserted at every
// start and owned by the file: the API refuses to change or delete them
// (409), as an operator who manages flavors in configuration expects; a
// flavor removed from the file becomes an ordinary one. A flavor's Ironic
// resource class is its resources:CUSTOM_<CLASS>=1 extra spec (as Nova's
// Ironic flavors), matched to the inventory's classes when it is set.

func (s *Service) ManageRoutes() {
	s.Compute("POST /v2.1/flavors", s.createFlavor)
	s.Compute("PUT /v2.1/flavors/{id}", s.updateFlavor)
	s.Compute("DELETE /v2.1/flavors/{id}", s.deleteFlavor)
	s.Compute("GET /v2.1/flavors/{id}/os-flavor-access", s.listFlavorAccess)
	s.Compute("POST /v2.1/flavors/{id}/action", s.flavorAction)
	s.Compute("POST /v2.1/flavors/{id}/os-extra_specs", s.createExtraSpecs)
	s.Compute("PUT /v2.1/flavors/{id}/os-extra_specs/{key}", s.updateExtraSpec)
	s.Compute("DELETE /v2.1/flavors/{id}/os-extra_specs/{key}", s.deleteExtraSpec)
}

// SeedFlavors stores the configured flavors (store.Flavors.SeedFlavors):
// public, with the extra specs Nova's Ironic flavors carry.
func SeedFlavors(ctx context.Context, st store.Flavors, flavors []catalog.Flavor) error {
	fs := make([]store.Flavor, 0, len(flavors))
	for _, f := range flavors {
		sf := store.Flavor{ID: f.ID, Name: f.Name, VCPUs: f.VCPUs, RAMMB: f.RAMMB, DiskGB: f.DiskGB,
			RxTxFactor: 1, IsPublic: true, ExtraSpecs: extraSpecs(f), ResourceClass: f.ResourceClass}
		if f.Description != "" {
			d := f.Description
			sf.Description = &d
		}
		fs = append(fs, sf)
	}
	if err := st.SeedFlavors(ctx, fs); err != nil {
		if errors.Is(err, store.ErrExists) {
			return fmt.Errorf("a configured flavor's name belongs to a flavor created through the API (rename one): %w", err)
		}
		return err
	}
	return nil
}

// ToCatalog is what a build takes from a flavor: its sizes, Ironic class,
// traits and capabilities (the extra specs the scheduler reads).
func ToCatalog(f store.Flavor) catalog.Flavor {
	c := catalog.Flavor{ID: f.ID, Name: f.Name, ResourceClass: f.ResourceClass, VCPUs: f.VCPUs, RAMMB: f.RAMMB,
		DiskGB: f.DiskGB}
	if f.Description != nil {
		c.Description = *f.Description
	}
	for k, v := range f.ExtraSpecs {
		ns, name, _ := strings.Cut(k, ":")
		switch {
		case ns == "trait" && v == "required":
			c.Traits = append(c.Traits, name)
		case ns == "trait" && v == "forbidden":
			c.ForbiddenTraits = append(c.ForbiddenTraits, name)
		case ns == "capabilities":
			if c.Capabilities == nil {
				c.Capabilities = map[string]string{}
			}
			c.Capabilities[name] = v
		}
	}
	sort.Strings(c.Traits)
	sort.Strings(c.ForbiddenTraits)
	return c
}

// ironicClass maps a flavor's resources:CUSTOM_X=N (N >= 1) to the Ironic
// class whose Placement name it is: a class of the inventory or of a
// configured flavor if one matches, else X in lower case (Ironic's usual
// spelling). "" when the flavor asks for no custom class (any node).
func (s *Service) ironicClass(r *core.Request, specs map[string]string) string {
	var custom []string
	for k, v := range specs {
		if rc, ok := strings.CutPrefix(k, "resources:"); ok && strings.HasPrefix(rc, "CUSTOM_") {
			if n, err := strconv.Atoi(v); err == nil && n >= 1 {
				custom = append(custom, rc)
			}
		}
	}
	if len(custom) == 0 {
		return ""
	}
	sort.Strings(custom)
	want := custom[0]
	if inv := s.admin.Inventory(); inv != nil {
		if nodes, err := inv(r.Context()); err == nil {
			for _, n := range nodes {
				if n.ResourceClass != "" && resourceClassName(n.ResourceClass) == want {
					return n.ResourceClass
				}
			}
		}
	}
	if all, err := s.Cfg.Store.ListFlavors(r.Context(), ""); err == nil {
		for _, f := range all {
			if f.Seeded && f.ResourceClass != "" && resourceClassName(f.ResourceClass) == want {
				return f.ResourceClass
			}
		}
	}
	return strings.ToLower(strings.TrimPrefix(want, "CUSTOM_"))
}

var flavorIDRE = regexp.MustCompile(`^[a-zA-Z0-9. _-]+$`)

// flavorInt reads an integer member given as a number or a string of
// digits (Nova's flavor_param_positive/_non_negative), min..MAX_INT.
func flavorInt(fields map[string]json.RawMessage, key string, min int, required bool) (int, error) {
	raw, ok := fields[key]
	if !ok {
		if required {
			return 0, core.BadRequest("Invalid input for field/attribute flavor. '%s' is a required property.", key)
		}
		return 0, nil
	}
	var n json.Number
	var str string
	switch {
	case json.Unmarshal(raw, &str) == nil:
		n = json.Number(str)
	case json.Unmarshal(raw, &n) == nil:
	default:
		return 0, core.BadRequest("Invalid input for field/attribute %s. Value: %s. It is not of type 'integer', 'string'.", key, raw)
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || v < int64(min) || v > math.MaxInt32 {
		return 0, core.BadRequest("Invalid input for field/attribute %s. Value: %s. It must be an integer from %d to %d.", key, raw, min, math.MaxInt32)
	}
	return int(v), nil
}

func (s *Service) createFlavor(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.FlavorCreate, r.Own()); err != nil {
		return err
	}
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(top["flavor"], &fields); err != nil || fields == nil || len(top) != 1 {
		return core.BadRequest("Invalid input for field/attribute flavor: want {\"flavor\": {name, ram, vcpus, disk, …}}.")
	}
	allowed := map[string]bool{"name": true, "id": true, "ram": true, "vcpus": true, "disk": true, "swap": true,
		"OS-FLV-EXT-DATA:ephemeral": true, "rxtx_factor": true, "os-flavor-access:is_public": true,
		"description": r.MV.AtLeast(mvFlavorDescription)}
	for k := range fields {
		if !allowed[k] {
			return core.BadRequest("Invalid input for field/attribute flavor. Additional properties are not allowed ('%s' was unexpected).", k)
		}
	}
	f := store.Flavor{RxTxFactor: 1, IsPublic: true, ExtraSpecs: map[string]string{}, CreatedAt: s.Cfg.Clock.Now().UTC()}
	if f.Name, err = core.RequiredString(fields, "name", 255); err != nil {
		return err
	}
	if err := core.CheckName("name", f.Name); err != nil {
		return err
	}
	if f.ID, err = flavorIDOf(fields["id"]); err != nil {
		return err
	}
	if f.RAMMB, err = flavorInt(fields, "ram", 1, true); err != nil {
		return err
	}
	if f.VCPUs, err = flavorInt(fields, "vcpus", 1, true); err != nil {
		return err
	}
	if f.DiskGB, err = flavorInt(fields, "disk", 0, true); err != nil {
		return err
	}
	if f.SwapMB, err = flavorInt(fields, "swap", 0, false); err != nil {
		return err
	}
	if f.EphemeralGB, err = flavorInt(fields, "OS-FLV-EXT-DATA:ephemeral", 0, false); err != nil {
		return err
	}
	if raw, ok := fields["rxtx_factor"]; ok {
		var n json.Number
		var str string
		if json.Unmarshal(raw, &str) == nil {
			n = json.Number(str)
		} else if json.Unmarshal(raw, &n) != nil {
			return core.BadRequest("Invalid input for field/attribute rxtx_factor. Value: %s. It is not a number.", raw)
		}
		v, err := n.Float64()
		if err != nil || v <= 0 || v > 3.40282e+38 {
			return core.BadRequest("Invalid input for field/attribute rxtx_factor. Value: %s. It must be a number above 0.", raw)
		}
		f.RxTxFactor = v
	}
	if raw, ok := fields["os-flavor-access:is_public"]; ok {
		if f.IsPublic, err = core.BoolValue(raw, "os-flavor-access:is_public"); err != nil {
			return err
		}
	}
	if f.Description, err = flavorDescriptionIn(fields); err != nil {
		return err
	}
	if err := s.Cfg.Store.CreateFlavor(r.Context(), f); err != nil {
		if errors.Is(err, store.ErrExists) {
			if strings.Contains(err.Error(), "name") {
				return core.Conflict("Flavor with name %s already exists.", f.Name)
			}
			return core.Conflict("Flavor with ID %s already exists.", f.ID)
		}
		return fmt.Errorf("create flavor: %w", err)
	}
	core.WriteJSON(w, http.StatusOK, flavorBody{Flavor: s.flavorView(r, f)})
	return nil
}

// flavorIDOf reads the optional id: a string, an integer, or null/absent
// (a new UUID).
func flavorIDOf(raw json.RawMessage) (string, error) {
	if raw == nil || string(raw) == "null" {
		return uuid.NewString(), nil
	}
	var id string
	var n json.Number
	switch {
	case json.Unmarshal(raw, &id) == nil:
	case json.Unmarshal(raw, &n) == nil:
		id = n.String()
	default:
		return "", core.BadRequest("Invalid input for field/attribute id. Value: %s. It is not of type 'string', 'integer'.", raw)
	}
	if len(id) > 255 || !flavorIDRE.MatchString(id) || strings.TrimSpace(id) != id {
		return "", core.BadRequest("Invalid input for field/attribute id. Value: %s. It must be 1 to 255 letters, digits, '.', ' ', '_' or '-', not beginning or ending with a space.", raw)
	}
	return id, nil
}

// flavorDescriptionIn reads description (2.55): a string of at most 65535
// printable characters, or null.
func flavorDescriptionIn(fields map[string]json.RawMessage) (*string, error) {
	raw, ok := fields["description"]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	d, err := core.OptionalString(fields, "description", 65535)
	if err != nil {
		return nil, err
	}
	if core.HasControl(strings.NewReplacer("\n", "", "\r", "", "\t", "").Replace(d)) {
		return nil, core.BadRequest("Invalid input for field/attribute description: it must not contain control characters.")
	}
	return &d, nil
}

// managed finds a flavor an admin may change: 404 when unknown, 409 when
// the configuration owns it.
func (s *Service) managed(r *core.Request, id string) (store.Flavor, error) {
	f, err := s.Cfg.Store.GetFlavor(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return f, core.NotFound("Flavor %s could not be found.", id)
	}
	if err != nil {
		return f, fmt.Errorf("flavor %s: %w", id, err)
	}
	if f.Seeded {
		return f, core.Conflict("Flavor %s is defined in ingot's configuration file; change it there.", id)
	}
	return f, nil
}

func (s *Service) flavorWriteErr(err error, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return core.NotFound("Flavor %s could not be found.", id)
	}
	if _, ok := core.AsAPIError(err); ok {
		return err
	}
	return fmt.Errorf("flavor %s: %w", id, err)
}

// updateFlavor is PUT /flavors/{id} (2.55+): the description only.
func (s *Service) updateFlavor(w http.ResponseWriter, r *core.Request) error {
	if !r.MV.AtLeast(mvFlavorDescription) {
		r.Authorized = true
		return core.NotFound("The resource could not be found.")
	}
	if err := r.Authorize(policy.FlavorUpdate, r.Own()); err != nil {
		return err
	}
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(top["flavor"], &fields); err != nil || fields == nil || len(top) != 1 {
		return core.BadRequest("Invalid input for field/attribute flavor: want {\"flavor\": {\"description\": …}}.")
	}
	if _, ok := fields["description"]; !ok || len(fields) != 1 {
		return core.BadRequest("Invalid input for field/attribute flavor. 'description' is the one required property.")
	}
	desc, err := flavorDescriptionIn(fields)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if _, err := s.managed(r, id); err != nil {
		return err
	}
	f, err := s.Cfg.Store.UpdateFlavor(r.Context(), id, func(f *store.Flavor) error {
		if f.Seeded {
			return core.Conflict("Flavor %s is defined in ingot's configuration file; change it there.", id)
		}
		f.Description = desc
		return nil
	})
	if err != nil {
		return s.flavorWriteErr(err, id)
	}
	core.WriteJSON(w, http.StatusOK, flavorBody{Flavor: s.flavorView(r, f)})
	return nil
}

func (s *Service) deleteFlavor(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.FlavorDelete, r.Own()); err != nil {
		return err
	}
	id := r.PathValue("id")
	if _, err := s.managed(r, id); err != nil {
		return err
	}
	if err := s.Cfg.Store.DeleteFlavor(r.Context(), id); err != nil {
		return s.flavorWriteErr(err, id)
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}
