package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/ingot-dev/ingot/internal/catalog"
)

// extraSpecs are the flavor's extra specs as Nova sets them for bare metal:
// one unit of the node's custom resource class and nothing of the standard
// resources, plus the required and forbidden traits and the capabilities.
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
	ID          string `json:"id"`
	Name        string `json:"name"`
	Links       []link `json:"links"`
	Description any    `json:"description,omitempty"` // 2.55
}

type flavorView struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	RAM         int               `json:"ram"`
	Disk        int               `json:"disk"`
	VCPUs       int               `json:"vcpus"`
	Ephemeral   int               `json:"OS-FLV-EXT-DATA:ephemeral"`
	Disabled    bool              `json:"OS-FLV-DISABLED:disabled"`
	Swap        any               `json:"swap"`
	RxTx        float64           `json:"rxtx_factor"`
	IsPublic    bool              `json:"os-flavor-access:is_public"`
	Links       []link            `json:"links"`
	Description any               `json:"description,omitempty"` // 2.55
	ExtraSpecs  map[string]string `json:"extra_specs,omitempty"` // 2.61
}

func flavorLinks(base, id string) []link {
	return []link{
		{Rel: "self", Href: base + "/v2.1/flavors/" + id},
		{Rel: "bookmark", Href: base + "/flavors/" + id},
	}
}

func flavorDescription(mv version, f catalog.Flavor) any {
	if !mv.atLeast(55) {
		return nil
	}
	return orNull(f.Description)
}

func (s *server) flavorView(r *request, f catalog.Flavor) flavorView {
	v := flavorView{
		ID: f.ID, Name: f.Name, RAM: f.RAMMB, Disk: f.DiskGB, VCPUs: f.VCPUs,
		Swap: "", RxTx: 1.0, IsPublic: true,
		Links:       flavorLinks(baseURL(r.Request), f.ID),
		Description: flavorDescription(r.mv, f),
	}
	if r.mv.atLeast(75) {
		v.Swap = 0 // Nova answers "" for no swap before 2.75
	}
	if r.mv.atLeast(61) {
		v.ExtraSpecs = extraSpecs(f)
	}
	return v
}

// flavorPage filters and pages the catalogue as Nova's flavor list does.
// is_public arrives as the literal "None" from the SDK (all flavors); every
// ingot flavor is public, so a request for private ones gets none.
func (s *server) flavorPage(r *request) ([]catalog.Flavor, error) {
	q := r.URL.Query()
	switch strings.ToLower(q.Get("is_public")) {
	case "", "none", "true", "t", "1", "yes", "y", "on":
	case "false", "f", "0", "no", "n", "off":
		return nil, nil
	default:
		return nil, badRequest("Invalid is_public filter [%s]", q.Get("is_public"))
	}
	minRAM, err := intParam(q.Get("minRam"), "minRam")
	if err != nil {
		return nil, err
	}
	minDisk, err := intParam(q.Get("minDisk"), "minDisk")
	if err != nil {
		return nil, err
	}
	limit, err := intParam(q.Get("limit"), "limit")
	if err != nil {
		return nil, err
	}
	var out []catalog.Flavor
	marker := q.Get("marker")
	seenMarker := marker == ""
	for _, f := range s.cfg.Catalog.Flavors {
		if !seenMarker {
			seenMarker = f.ID == marker
			continue
		}
		if f.RAMMB >= minRAM && f.DiskGB >= minDisk {
			out = append(out, f)
		}
	}
	if !seenMarker {
		return nil, badRequest("marker [%s] not found", marker)
	}
	if q.Has("limit") && limit < len(out) {
		out = out[:limit]
	}
	return out, nil
}

func intParam(v, name string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, badRequest("Invalid input for query parameters %s. Value: %s. It must be a non-negative integer.", name, v)
	}
	return n, nil
}

func (s *server) listFlavors(w http.ResponseWriter, r *request) error {
	page, err := s.flavorPage(r)
	if err != nil {
		return err
	}
	base := baseURL(r.Request)
	out := make([]flavorRef, 0, len(page))
	for _, f := range page {
		out = append(out, flavorRef{ID: f.ID, Name: f.Name, Links: flavorLinks(base, f.ID),
			Description: flavorDescription(r.mv, f)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"flavors": out})
	return nil
}

func (s *server) listFlavorsDetail(w http.ResponseWriter, r *request) error {
	page, err := s.flavorPage(r)
	if err != nil {
		return err
	}
	out := make([]flavorView, 0, len(page))
	for _, f := range page {
		out = append(out, s.flavorView(r, f))
	}
	writeJSON(w, http.StatusOK, map[string]any{"flavors": out})
	return nil
}

// lookupFlavor finds a flavor by id, then by name (novaclient and the SDK
// try GET /flavors/NAME before listing).
func (s *server) lookupFlavor(ref string) (catalog.Flavor, error) {
	f, ok := s.cfg.Catalog.Flavor(ref)
	if !ok {
		return f, notFound("Flavor %s could not be found.", ref)
	}
	return f, nil
}

func (s *server) showFlavor(w http.ResponseWriter, r *request) error {
	f, err := s.lookupFlavor(r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"flavor": s.flavorView(r, f)})
	return nil
}

func (s *server) flavorExtraSpecs(w http.ResponseWriter, r *request) error {
	f, err := s.lookupFlavor(r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"extra_specs": extraSpecs(f)})
	return nil
}

func (s *server) flavorExtraSpec(w http.ResponseWriter, r *request) error {
	f, err := s.lookupFlavor(r.PathValue("id"))
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	v, ok := extraSpecs(f)[key]
	if !ok {
		return notFound("Flavor %s has no extra specs with key %s.", f.ID, key)
	}
	writeJSON(w, http.StatusOK, map[string]string{key: v})
	return nil
}
