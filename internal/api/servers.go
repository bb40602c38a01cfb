package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// maxNameFilter caps the name filter, a regular expression: names are at
// most 255 characters, and a long pattern costs CPU and memory to compile.
const maxNameFilter = 255

// maxPage is Nova's default osapi_max_limit: a listing never returns (or
// loads) more servers than this at once.
const maxPage = 1000

// createServer records a new server with desired state active and answers
// 202 once the record is committed; the reconciler does the rest.
func (s *server) createServer(w http.ResponseWriter, r *request) error {
	if err := r.authorize(policy.ServersCreate, r.own()); err != nil {
		return err
	}
	c, err := s.parseCreate(r)
	if err != nil {
		return err
	}
	limits, err := s.projectLimits(r, r.ident.ProjectID)
	if err != nil {
		return err
	}
	if lim := limits.Get(store.ResMetadataItems); lim >= 0 && len(c.metadata) > lim {
		return forbidden("Quota exceeded for metadata_items: Requested %d, but already used 0 of %d metadata_items", len(c.metadata), lim)
	}
	now := s.cfg.Clock.Now().UTC()
	sv := &lifecycle.Server{
		ID:        uuid.NewString(),
		Name:      c.name,
		ProjectID: r.ident.ProjectID,
		UserID:    r.ident.UserID,
		Spec: lifecycle.Spec{
			FlavorID:      c.flavor.ID,
			ImageID:       c.image.ID,
			ResourceClass: c.flavor.ResourceClass,
			ImageSource:   c.image.URL,
			ImageChecksum: c.image.Checksum,
			RootGB:        c.flavor.DiskGB,
			Networks:      c.networks,
			Metadata:      c.metadata,
			UserData:      c.userData,
			Hostname:      c.hostname,
			KeyName:       c.keyName,
			PublicKey:     c.publicKey,
			KeyType:       c.keyType,
			Volumes:       c.volumes,
			VCPUs:         c.flavor.VCPUs,
			RAMMB:         c.flavor.RAMMB,
			Tags:          c.tags,
			Description:   c.description,
			Group:         c.group,
		},
		Desired:         lifecycle.DesiredActive,
		Phase:           lifecycle.PhasePending,
		CreatedAt:       now,
		UpdatedAt:       now,
		PhaseSince:      now,
		Deadline:        lifecycle.Config{BuildTimeout: s.cfg.BuildTimeout}.BuildDeadline(now),
		CreateRequestID: r.id, // the same id the client sees in x-openstack-request-id
	}
	resolveGuest(sv, c.flavor)
	if err := s.cfg.Store.CreateServerWithin(r.Context(), sv, s.cfg.Quotas); err != nil {
		var qe *store.QuotaExceededError
		if errors.As(err, &qe) && qe.Resource == store.ResServerGroupMembers {
			return forbidden("Quota exceeded, too many servers in group")
		}
		if errors.As(err, &qe) {
			return forbidden("%s", qe.Error())
		}
		if c.group != nil && errors.Is(err, store.ErrNotFound) && len(sv.Spec.Volumes) == 0 {
			return badRequest("Instance group %s could not be found.", c.group.ID)
		}
		if len(sv.Spec.Volumes) > 0 {
			err = volumeCreateError(err)
		}
		return fmt.Errorf("create server %s: %w", sv.ID, err)
	}
	s.cfg.Kick()
	rd := s.renderer(r)
	w.Header().Set("Location", rd.base+"/v2.1/servers/"+sv.ID)
	writeJSON(w, http.StatusAccepted, map[string]any{"server": map[string]any{
		"id":                sv.ID,
		"links":             rd.serverLinks(sv.ID),
		"OS-DCF:diskConfig": "MANUAL",
		"security_groups":   []map[string]string{{"name": "default"}},
	}})
	return nil
}

// visibleServer loads a server the caller may see and checks rule on it:
// 404 for non-UUID ids (the CLI tries names here first), unknown ids,
// deleted servers and another project's servers (Nova's answer, unless
// the caller is an admin); 403 when rule refuses.
func (s *server) visibleServer(r *request, id, rule string) (*lifecycle.Server, error) {
	if !isUUID(id) {
		return nil, notFound("Instance %s could not be found.", id)
	}
	sv, err := s.cfg.Store.GetServer(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("Instance %s could not be found.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get server %s: %w", id, err)
	}
	if !lifecycle.Nova(sv).Visible || !r.sees(sv.ProjectID) {
		return nil, notFound("Instance %s could not be found.", id)
	}
	if err := r.authorize(rule, target(sv.ProjectID, sv.UserID)); err != nil {
		return nil, err
	}
	return sv, nil
}

func (s *server) showServer(w http.ResponseWriter, r *request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServersShow)
	if err != nil {
		return err
	}
	ports, err := s.cfg.Store.Ports(r.Context(), sv.ID)
	if err != nil {
		return fmt.Errorf("ports of %s: %w", sv.ID, err)
	}
	view := s.renderer(r).server(sv, ports)
	if err := s.attachVolumes(r, []*lifecycle.Server{sv}, []*serverView{view}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"server": view})
	return nil
}

// deleteServer records the user's delete and answers 204 once committed.
// Repeating it is harmless (Store.RequestDelete is idempotent).
func (s *server) deleteServer(w http.ResponseWriter, r *request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServersDelete)
	if err != nil {
		return err
	}
	id := sv.ID
	if err := lockConflict(sv, r.isAdmin()); err != nil {
		return err
	}
	err = s.cfg.Store.RequestDelete(r.Context(), id, r.id, s.cfg.Clock.Now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		return notFound("Instance %s could not be found.", id)
	}
	if err != nil {
		return fmt.Errorf("delete server %s: %w", id, err)
	}
	s.cfg.Kick()
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// novaStatuses are the statuses Nova's list filter knows; those ingot's
// servers never show (listStatus) match nothing.
var novaStatuses = map[string]bool{
	"ACTIVE": true, "BUILD": true, "DELETED": true, "ERROR": true, "HARD_REBOOT": true,
	"MIGRATING": true, "PASSWORD": true, "PAUSED": true, "REBOOT": true, "REBUILD": true,
	"RESCUE": true, "RESIZE": true, "REVERT_RESIZE": true, "SHELVED": true,
	"SHELVED_OFFLOADED": true, "SHUTOFF": true, "SOFT_DELETED": true, "SUSPENDED": true,
	"VERIFY_RESIZE": true, "UNKNOWN": true,
}

// listQuery parses the filters the store applies. name is a regular
// expression searched in the name, as in Nova (case-sensitive, as Nova on
// SQLite or PostgreSQL): a plain name goes to the store as a substring match,
// which is the same search; a pattern is applied by page (see nameRE).
// image and flavor are applied by page; other Nova filters are ignored, as
// Nova ignores filters a non-admin may not use.
// empty reports a query that can match nothing.
func (s *server) listQuery(r *request) (opts store.ListOptions, empty bool, err error) {
	q := r.URL.Query()
	if err := s.listScope(r, &opts); err != nil {
		return opts, false, err
	}
	if name := q.Get("name"); len(name) > maxNameFilter {
		return opts, false, badRequest("Invalid input for query parameters name. Value: %.32s…. It is longer than %d characters.", name, maxNameFilter)
	}
	if name := q.Get("name"); regexp.QuoteMeta(name) == name {
		opts.Name = name
	}
	opts.Limit = maxPage
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return opts, false, badRequest("Invalid input for query parameters limit. Value: %s. It must be a non-negative integer.", l)
		}
		if n == 0 {
			return opts, true, nil
		}
		opts.Limit = min(n, maxPage)
	}
	if st := q.Get("status"); st != "" {
		st = strings.ToUpper(st)
		if !novaStatuses[st] {
			if r.mv.atLeast(38) {
				return opts, false, badRequest("Invalid status value")
			}
			return opts, true, nil
		}
		var shown bool
		if opts.Status, _, shown = listStatus(st); !shown {
			return opts, true, nil
		}
	}
	if m := q.Get("marker"); m != "" {
		if !isUUID(m) {
			return opts, false, badRequest("marker [%s] not found", m)
		}
		opts.Marker = m // an unknown marker is ErrNotFound from ListServers
	}
	if err := parseChanges(r, q, &opts); err != nil {
		return opts, false, err
	}
	parseTagFilters(r, q, &opts)
	if opts.Sort, err = parseSort(r, q); err != nil {
		return opts, false, err
	}
	return opts, false, nil
}

// page loads one page of servers. The image and flavor filters are not
// store filters: with either, the store is read in pages of maxPage and
// filtered here until the page is full or the store is exhausted, so paging
// by marker stays exact (the rarely used filter pays the scan, not the rest).
func (s *server) page(r *request) ([]*lifecycle.Server, store.ListOptions, error) {
	opts, empty, err := s.listQuery(r)
	if err != nil || empty {
		return nil, opts, err
	}
	match, filtered, err := s.specFilter(r)
	if err != nil {
		return nil, opts, err
	}
	_, refine, _ := listStatus(opts.Status)
	if !filtered && !refine {
		list, err := s.list(r, opts)
		return list, opts, err
	}
	want, scan := opts.Limit, opts
	scan.Limit = maxPage
	if !filtered {
		// Only the status needs refining, which drops few rows: read
		// pages of the size asked for.
		match, scan.Limit = statusMatch(opts.Status), want
	} else if refine {
		spec, status := match, statusMatch(opts.Status)
		match = func(sv *lifecycle.Server) bool { return spec(sv) && status(sv) }
	}
	var out []*lifecycle.Server
	for len(out) < want {
		batch, err := s.list(r, scan)
		if err != nil {
			return nil, opts, err
		}
		for _, sv := range batch {
			if match(sv) {
				out = append(out, sv)
				if len(out) == want {
					break
				}
			}
		}
		if len(batch) < scan.Limit {
			break
		}
		scan.Marker = batch[len(batch)-1].ID
	}
	return out, opts, nil
}

func (s *server) list(r *request, opts store.ListOptions) ([]*lifecycle.Server, error) {
	list, err := s.cfg.Store.ListServers(r.Context(), opts)
	if errors.Is(err, store.ErrNotFound) && opts.Marker != "" {
		return nil, badRequest("marker [%s] not found", opts.Marker)
	}
	if err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	return list, nil
}

// specFilter builds the filter of a listing the store does not apply: image
// and flavor (by id, or by a name the catalogue knows) and a name pattern;
// filtered is false when there is none.
func (s *server) specFilter(r *request) (match func(*lifecycle.Server) bool, filtered bool, err error) {
	q := r.URL.Query()
	image, flavor := refID(q.Get("image")), refID(q.Get("flavor"))
	nameRE, err := nameRE(q.Get("name"))
	if err != nil {
		return nil, false, err
	}
	if image == "" && flavor == "" && nameRE == nil {
		return nil, false, nil
	}
	if img, ok := s.cfg.Catalog.Image(image); ok {
		image = img.ID
	}
	if flavor != "" {
		if f, ok, err := s.findFlavor(r.Context(), r, flavor); err != nil {
			return nil, false, err
		} else if ok {
			flavor = f.ID
		}
	}
	return func(sv *lifecycle.Server) bool {
		return (image == "" || strings.EqualFold(sv.Spec.ImageID, image)) &&
			(flavor == "" || sv.Spec.FlavorID == flavor) &&
			(nameRE == nil || nameRE.MatchString(sv.Name))
	}, true, nil
}

// nameRE compiles a name filter that is a pattern (nil for a plain name,
// which the store matches). Go's RE2 syntax covers what users write in
// Nova's Python patterns (anchors, classes, alternation, repetition); a
// pattern it cannot compile, such as a back-reference, is a 400.
func nameRE(name string) (*regexp.Regexp, error) {
	if regexp.QuoteMeta(name) == name {
		return nil, nil
	}
	re, err := regexp.Compile(name)
	if err != nil {
		return nil, badRequest("Invalid input for query parameters name. Value: %s. It is not a valid regular expression: %v", name, err)
	}
	return re, nil
}

// nextLinks is servers_links: a next link when the page is full, as Nova
// gives it; the other filters are carried over.
func nextLinks(r *request, list []*lifecycle.Server, limit int) []link {
	if len(list) == 0 || len(list) < limit {
		return nil
	}
	q := r.URL.Query()
	q.Set("limit", strconv.Itoa(limit))
	q.Set("marker", list[len(list)-1].ID)
	u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	return []link{{Rel: "next", Href: baseURL(r.Request) + u.String()}}
}

type serverRef struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Links []link `json:"links"`
}

func (s *server) listServers(w http.ResponseWriter, r *request) error {
	if err := r.authorize(policy.ServersIndex, r.own()); err != nil {
		return err
	}
	list, opts, err := s.page(r)
	if err != nil {
		return err
	}
	rd := s.renderer(r)
	out := make([]serverRef, 0, len(list))
	for _, sv := range list {
		out = append(out, serverRef{ID: sv.ID, Name: sv.Name, Links: rd.serverLinks(sv.ID)})
	}
	body := map[string]any{"servers": out}
	if links := nextLinks(r, list, opts.Limit); links != nil {
		body["servers_links"] = links
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

func (s *server) listServersDetail(w http.ResponseWriter, r *request) error {
	if err := r.authorize(policy.ServersDetail, r.own()); err != nil {
		return err
	}
	list, opts, err := s.page(r)
	if err != nil {
		return err
	}
	ids := make([]string, len(list))
	for i, sv := range list {
		ids[i] = sv.ID
	}
	ports := map[string][]store.Port{}
	if len(ids) > 0 {
		if ports, err = s.cfg.Store.PortsOn(r.Context(), ids); err != nil {
			return fmt.Errorf("ports of %d servers: %w", len(ids), err)
		}
	}
	rd := s.renderer(r)
	out := make([]*serverView, 0, len(list))
	for _, sv := range list {
		out = append(out, rd.server(sv, ports[sv.ID]))
	}
	if err := s.attachVolumes(r, list, out); err != nil {
		return err
	}
	body := map[string]any{"servers": out}
	if links := nextLinks(r, list, opts.Limit); links != nil {
		body["servers_links"] = links
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// networkName names a network id for addresses (the id itself when the
// network left the configuration).
func (s *server) networkName(id string) string {
	for _, n := range s.cfg.Networks {
		if strings.EqualFold(n.ID, id) {
			return n.Name
		}
	}
	return id
}

// listScope sets which projects a listing covers: the caller's own, or
// with all_tenants (admins only, as in Nova: 403 otherwise) every project,
// or the one named by project_id or tenant_id.
func (s *server) listScope(r *request, opts *store.ListOptions) error {
	q := r.URL.Query()
	all, err := allTenants(q)
	if err != nil {
		return err
	}
	if !all {
		opts.ProjectID = r.ident.ProjectID // tenant_id is ignored without all_tenants, as in Nova
		return nil
	}
	rule := policy.ServersIndexAllTenants
	if strings.HasSuffix(r.URL.Path, "/detail") {
		rule = policy.ServersDetailAll
	}
	if err := r.authorize(rule, r.own()); err != nil {
		return err
	}
	opts.ProjectID = q.Get("project_id")
	if opts.ProjectID == "" {
		opts.ProjectID = q.Get("tenant_id")
	}
	return nil
}

// allTenants reads all_tenants as Nova does: present and empty, or a true
// word, is on; a word that is not a boolean is a 400.
func allTenants(q url.Values) (bool, error) {
	if !q.Has("all_tenants") {
		return false, nil
	}
	switch v := strings.ToLower(strings.TrimSpace(q.Get("all_tenants"))); v {
	case "", "1", "t", "true", "on", "y", "yes":
		return true, nil
	case "0", "f", "false", "off", "n", "no":
		return false, nil
	default:
		return false, badRequest("Invalid value '%s' for all_tenants", q.Get("all_tenants"))
	}
}
