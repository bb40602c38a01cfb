package flavors

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// extraSpecs are a configured flavor's extra specs as Nova sets them for
// bare metal: one unit of the node's custom resource class and nothing of
// the standard resources, plus the required and forbidden traits and the
// capabilities. They are what SeedFlavors stores.
func extraSpecs(f catalog.Flavor) map[string]string {
	specs := map[string]string{
		"resources:" + resourceClassName(f.ResourceClass): "1",
		"resources:VCPU":      "0",
		"resources:MEMORY_MB": "0",
		"resources:DISK_GB":   "0",
	}
	for _, t := range f.Traits {
		specs["trait:"+t] = "required"
	}
	for _, t := range f.ForbiddenTraits {
		specs["trait:"+t] = "forbidden"
	}
	for k, v := range f.Capabilities {
		specs["capabilities:"+k] = v
	}
	return specs
}

// resourceClassName is Placement's name for an Ironic resource class:
// CUSTOM_ + upper case, every character that is not A-Z, 0-9 as _.
func resourceClassName(rc string) string {
	var b strings.Builder
	b.WriteString("CUSTOM_")
	for _, c := range strings.ToUpper(rc) {
		if (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

type flavorRef struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Links       []core.Link `json:"links"`
	Description any         `json:"description,omitempty"` // 2.55
}

type flavorBody struct {
	Flavor flavorView `json:"flavor"`
}

// extraSpecsBody is a flavor's extra specs (a map: their keys are the
// operator's).
type extraSpecsBody struct {
	ExtraSpecs map[string]string `json:"extra_specs"`
}

type flavorView struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	RAM         int         `json:"ram"`
	Disk        int         `json:"disk"`
	VCPUs       int         `json:"vcpus"`
	Ephemeral   int         `json:"OS-FLV-EXT-DATA:ephemeral"`
	Disabled    bool        `json:"OS-FLV-DISABLED:disabled"`
	Swap        any         `json:"swap"`
	RxTx        float64     `json:"rxtx_factor"`
	IsPublic    bool        `json:"os-flavor-access:is_public"`
	Links       []core.Link `json:"links"`
	Description any         `json:"description,omitempty"` // 2.55
	ExtraSpecs  any         `json:"extra_specs,omitempty"` // 2.61, a map (empty too)
}

func flavorLinks(base, id string) []core.Link {
	return []core.Link{
		{Rel: "self", Href: base + "/v2.1/flavors/" + id},
		{Rel: "bookmark", Href: base + "/flavors/" + id},
	}
}

func flavorDescription(mv core.Version, f store.Flavor) any {
	if !mv.AtLeast(mvFlavorDescription) {
		return nil
	}
	if f.Description == nil {
		return core.OrNull("")
	}
	return *f.Description
}

func (s *Service) flavorView(r *core.Request, f store.Flavor) flavorView {
	v := flavorView{
		ID: f.ID, Name: f.Name, RAM: f.RAMMB, Disk: f.DiskGB, VCPUs: f.VCPUs, Ephemeral: f.EphemeralGB,
		Disabled: f.Disabled, Swap: "", RxTx: f.RxTxFactor, IsPublic: f.IsPublic,
		Links:       flavorLinks(core.BaseURL(r.Request), f.ID),
		Description: flavorDescription(r.MV, f),
	}
	if f.SwapMB > 0 || r.MV.AtLeast(mvAPICleanup) {
		v.Swap = f.SwapMB // Nova answers "" for no swap before 2.75
	}
	if r.MV.AtLeast(mvFlavorExtraSpecs) && r.Can(policy.FlavorExtraSpecsIndex, r.Own()) {
		specs := f.ExtraSpecs
		if specs == nil {
			specs = map[string]string{}
		}
		v.ExtraSpecs = specs
	}
	return v
}

// parseIsPublic reads Nova's is_public filter: true (also absent), false,
// or none (every flavor: nil).
func parseIsPublic(v string) (*bool, error) {
	t, f := true, false
	switch strings.ToLower(v) {
	case "", "true", "t", "1", "yes", "y", "on":
		return &t, nil
	case "false", "f", "0", "no", "n", "off":
		return &f, nil
	case "none":
		return nil, nil
	}
	return nil, core.BadRequest("Invalid is_public filter [%s]", v)
}

// flavorPage filters and pages the flavors as Nova's flavor list does. A
// project sees the public flavors and the private ones it has access to;
// an admin may ask for the private ones (is_public=false) or all
// (is_public=none, the SDK's literal), the public ones by default.
func (s *Service) flavorPage(r *core.Request) ([]store.Flavor, error) {
	q := r.URL.Query()
	public, err := parseIsPublic(q.Get("is_public"))
	if err != nil {
		return nil, err
	}
	admin := r.IsAdmin()
	if !admin {
		t := true
		public = &t
	}
	minRAM, err := core.IntParam(q.Get("minRam"), "minRam")
	if err != nil {
		return nil, err
	}
	minDisk, err := core.IntParam(q.Get("minDisk"), "minDisk")
	if err != nil {
		return nil, err
	}
	limit, err := core.IntParam(q.Get("limit"), "limit")
	if err != nil {
		return nil, err
	}
	all, err := s.Cfg.Store.ListFlavors(r.Context(), "")
	if err != nil {
		return nil, fmt.Errorf("list flavors: %w", err)
	}
	var access map[string]bool
	if public != nil && *public {
		mine, err := s.Cfg.Store.ListFlavors(r.Context(), r.Ident.ProjectID)
		if err != nil {
			return nil, fmt.Errorf("list flavors: %w", err)
		}
		access = map[string]bool{}
		for _, f := range mine {
			access[f.ID] = true
		}
	}
	var out []store.Flavor
	marker := q.Get("marker")
	seenMarker := marker == ""
	for _, f := range all {
		if !seenMarker {
			seenMarker = f.ID == marker
			continue
		}
		switch {
		case public == nil:
		case *public && !access[f.ID]:
			continue
		case !*public && f.IsPublic:
			continue
		}
		if !admin && f.Disabled {
			continue
		}
		if f.RAMMB >= minRAM && f.DiskGB >= minDisk {
			out = append(out, f)
		}
	}
	if !seenMarker {
		return nil, core.BadRequest("marker [%s] not found", marker)
	}
	if q.Has("limit") && limit < len(out) {
		out = out[:limit]
	}
	return out, nil
}

func (s *Service) ListFlavors(w http.ResponseWriter, r *core.Request) error {
	page, err := s.flavorPage(r)
	if err != nil {
		return err
	}
	base := core.BaseURL(r.Request)
	out := make([]flavorRef, 0, len(page))
	for _, f := range page {
		out = append(out, flavorRef{ID: f.ID, Name: f.Name, Links: flavorLinks(base, f.ID),
			Description: flavorDescription(r.MV, f)})
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Flavors []flavorRef `json:"flavors"`
	}{out})
	return nil
}

func (s *Service) ListFlavorsDetail(w http.ResponseWriter, r *core.Request) error {
	page, err := s.flavorPage(r)
	if err != nil {
		return err
	}
	out := make([]flavorView, 0, len(page))
	for _, f := range page {
		out = append(out, s.flavorView(r, f))
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Flavors []flavorView `json:"flavors"`
	}{out})
	return nil
}

// FindFlavor finds a flavor the caller may use by id, then by name
// (novaclient and the SDK try GET /flavors/NAME before listing): a private
// flavor is found only by an admin or a project with access.
func (s *Service) FindFlavor(ctx context.Context, r *core.Request, ref string) (store.Flavor, bool, error) {
	project := r.Ident.ProjectID
	if r.IsAdmin() {
		project = ""
	}
	f, err := s.Cfg.Store.GetFlavor(ctx, ref)
	switch {
	case err == nil:
		if project == "" || f.IsPublic {
			return f, true, nil
		}
	case !errors.Is(err, store.ErrNotFound):
		return f, false, fmt.Errorf("flavor %s: %w", ref, err)
	}
	visible, err := s.Cfg.Store.ListFlavors(ctx, project)
	if err != nil {
		return store.Flavor{}, false, fmt.Errorf("list flavors: %w", err)
	}
	for _, v := range visible {
		if v.ID == ref {
			return v, true, nil
		}
	}
	for _, v := range visible {
		if v.Name == ref {
			return v, true, nil
		}
	}
	return store.Flavor{}, false, nil
}

// lookupFlavor is findFlavor answering 404 for a flavor the caller cannot see.
func (s *Service) lookupFlavor(r *core.Request, ref string) (store.Flavor, error) {
	f, ok, err := s.FindFlavor(r.Context(), r, ref)
	if err != nil {
		return f, err
	}
	if !ok {
		return f, core.NotFound("Flavor %s could not be found.", ref)
	}
	return f, nil
}

func (s *Service) ShowFlavor(w http.ResponseWriter, r *core.Request) error {
	f, err := s.lookupFlavor(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, flavorBody{Flavor: s.flavorView(r, f)})
	return nil
}

func (s *Service) FlavorExtraSpecs(w http.ResponseWriter, r *core.Request) error {
	f, err := s.lookupFlavor(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	specs := f.ExtraSpecs
	if specs == nil {
		specs = map[string]string{}
	}
	core.WriteJSON(w, http.StatusOK, extraSpecsBody{ExtraSpecs: specs})
	return nil
}

func (s *Service) FlavorExtraSpec(w http.ResponseWriter, r *core.Request) error {
	f, err := s.lookupFlavor(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	v, ok := f.ExtraSpecs[key]
	if !ok {
		return core.NotFound("Flavor %s has no extra specs with key %s.", f.ID, key)
	}
	core.WriteJSON(w, http.StatusOK, map[string]string{key: v})
	return nil
}
