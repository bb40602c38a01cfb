package servers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// CreateServer records the new servers (one, or max_count as far as the
// quota allows) with desired state active and answers 202 once the records
// are committed; the reconciler does the rest.
func (s *Service) CreateServer(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.ServersCreate, r.Own()); err != nil {
		return err
	}
	c, err := s.parseCreate(r)
	if err != nil {
		return err
	}
	limits, err := s.quotas.ProjectLimits(r, r.Ident.ProjectID)
	if err != nil {
		return err
	}
	if lim := limits.Get(store.ResMetadataItems); lim >= 0 && len(c.metadata) > lim {
		return core.Forbidden("Quota exceeded for metadata_items: Requested %d, but already used 0 of %d metadata_items", len(c.metadata), lim)
	}
	if _, ok := s.Cfg.Store.(store.MultiCreator); !ok && c.multi.maxCount > 1 {
		return core.BadRequest("Invalid input for field/attribute max_count. Value: %d. This ingot's database cannot create several servers in one request; create them one by one.", c.multi.maxCount)
	}
	// The password: the caller's, else a generated one unless instance
	// passwords are off (nobody could learn a generated one then).
	password := ""
	if c.adminPass != nil {
		password = *c.adminPass
	} else if !s.Cfg.DisableInstancePassword {
		password = generatePassword()
	}
	now := s.Cfg.Clock.Now().UTC()
	resv := newReservationID()
	servers := make([]*lifecycle.Server, c.multi.maxCount)
	for i := range servers {
		// A microsecond apart: the servers of one request list in launch
		// order (Nova's sequential ids give the same order).
		servers[i] = s.newServer(r, c, now.Add(time.Duration(i)*time.Microsecond), resv, i, password)
	}
	n := len(servers)
	if n > c.multi.minCount {
		// How many fit decides the names (name-1 … only when more than
		// one is made); the create below checks the quota again, atomically.
		u, err := s.Cfg.Store.Usage(r.Context(), r.Ident.ProjectID)
		if err != nil {
			return fmt.Errorf("usage of %s: %w", r.Ident.ProjectID, err)
		}
		if n, err = store.FitServers(u, limits, servers, c.multi.minCount); err != nil {
			return quotaError(err)
		}
		servers = servers[:n]
	}
	for i, sv := range servers {
		sv.Name = multiName(c.name, i, n)
		resolveGuest(sv, c.flavor)
		addImageTraits(&sv.Spec, c.imageTraits)
	}
	if err := s.createAll(r, servers); err != nil {
		var qe *store.QuotaExceededError
		if errors.As(err, &qe) && qe.Resource == store.ResServerGroupMembers {
			return core.Forbidden("Quota exceeded, too many servers in group")
		}
		if errors.Is(err, store.ErrQuotaExceeded) {
			return quotaError(err)
		}
		if c.group != nil && errors.Is(err, store.ErrNotFound) && len(c.volumes) == 0 {
			return core.BadRequest("Instance group %s could not be found.", c.group.ID)
		}
		if len(c.volumes) > 0 {
			err = volumeCreateError(err)
		}
		return fmt.Errorf("create %d servers (first %s): %w", n, servers[0].ID, err)
	}
	ids := make([]string, len(servers))
	for i, sv := range servers {
		ids[i] = sv.ID
	}
	s.Cfg.Kick(ids...)
	if c.multi.returnReservation {
		core.WriteJSON(w, http.StatusAccepted, reservationBody{ReservationID: resv})
		return nil
	}
	// Nova answers with the first server of a multiple create.
	sv := servers[0]
	rd := s.renderer(r)
	w.Header().Set("Location", rd.base+"/v2.1/servers/"+sv.ID)
	body := createdServer{ID: sv.ID, Links: rd.serverLinks(sv.ID), DiskConfig: diskConfig(sv.Spec.DiskConfig),
		SecurityGroups: groupNames(sv)}
	if !s.Cfg.DisableInstancePassword {
		body.AdminPass = &password
	}
	core.WriteJSON(w, http.StatusAccepted, serverBody{Server: body})
	return nil
}

// createAll records the servers of one create in one transaction, with the
// quota checked for all of them. A store that cannot create several at
// once gets one server only (createServer refused max_count > 1 for it).
func (s *Service) createAll(r *core.Request, servers []*lifecycle.Server) error {
	defaults, err := s.quotas.DefaultLimits(r)
	if err != nil {
		return err
	}
	if mc, ok := s.Cfg.Store.(store.MultiCreator); ok {
		_, err = mc.CreateServersWithin(r.Context(), servers, len(servers), defaults)
	} else {
		err = s.Cfg.Store.CreateServerWithin(r.Context(), servers[0], defaults)
	}
	if errors.Is(err, store.ErrCommitUnknown) && s.recorded(r.Context(), servers[0].ID) {
		return nil // it committed: a 503 now would have the client create it twice
	}
	return err
}

// commitLookup bounds how long a create whose commit got no answer waits
// for the database to say whether it committed.
const commitLookup = 10 * time.Second

// recorded reports whether server id is in the database, asking again
// while the database is away, for commitLookup at most. A 503 for a create
// that committed would have the client's retry make a second server (seen
// in TestFailoverToStandby: the primary killed in the commit, the
// synchronous standby promoted with it).
func (s *Service) recorded(ctx context.Context, id string) bool {
	ctx, cancel := context.WithTimeout(ctx, commitLookup)
	defer cancel()
	for {
		_, err := s.Cfg.Store.GetServer(ctx, id)
		switch {
		case err == nil:
			return true
		case !store.Unavailable(s.Cfg.Store, err):
			return false // not found (it did not commit), or another refusal
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// quotaError is a *store.QuotaExceededError as Nova's 403; err itself otherwise.
func quotaError(err error) error {
	var qe *store.QuotaExceededError
	if errors.As(err, &qe) {
		return core.Forbidden("%s", qe.Error())
	}
	return err
}

// newServer is the record of the i-th server of a create.
func (s *Service) newServer(r *core.Request, c *createRequest, now time.Time, resv string, i int, password string) *lifecycle.Server {
	return &lifecycle.Server{
		ID:        uuid.NewString(),
		Name:      c.name,
		ProjectID: r.Ident.ProjectID,
		UserID:    r.Ident.UserID,
		Spec: lifecycle.Spec{
			FlavorID:         c.flavor.ID,
			ImageID:          c.image.ID,
			ResourceClass:    c.flavor.ResourceClass,
			ImageSource:      c.image.URL,
			ImageChecksum:    c.image.Checksum,
			RootGB:           c.flavor.DiskGB,
			Networks:         c.networks,
			FixedIPs:         c.fixedIPs,
			UserPorts:        c.userPorts,
			Metadata:         c.metadata,
			UserData:         c.userData,
			Hostname:         c.hostname,
			KeyName:          c.keyName,
			PublicKey:        c.publicKey,
			KeyType:          c.keyType,
			Volumes:          c.volumes,
			VCPUs:            c.flavor.VCPUs,
			RAMMB:            c.flavor.RAMMB,
			Tags:             c.tags,
			Description:      c.description,
			AccessIPv4:       c.accessIPv4,
			AccessIPv6:       c.accessIPv6,
			DiskConfig:       c.diskConfig,
			SecurityGroups:   c.securityGroups,
			SecurityGroupIDs: c.securityGroupIDs,
			ReservationID:    resv,
			LaunchIndex:      i,
			AdminPass:        password,
			Group:            c.group,
			Files:            c.files,
		},
		Desired:         lifecycle.DesiredActive,
		Phase:           lifecycle.PhasePending,
		VolumeToken:     c.volumeToken,
		CreatedAt:       now,
		UpdatedAt:       now,
		PhaseSince:      now,
		Deadline:        lifecycle.Config{BuildTimeout: s.Cfg.BuildTimeout}.BuildDeadline(now),
		CreateRequestID: r.ID, // the same id the client sees in x-openstack-request-id
	}
}

// visibleServer loads a server the caller may see and checks rule on it:
// 404 for non-UUID ids (the CLI tries names here first), unknown ids,
// deleted servers and another project's servers (Nova's answer, unless
// the caller is an admin); 403 when rule refuses.
func (s *Service) visibleServer(r *core.Request, id, rule string) (*lifecycle.Server, error) {
	return s.visible(r, id, rule, s.Cfg.Store.GetServer)
}

// visible is visibleServer with the server read by get.
func (s *Service) visible(r *core.Request, id, rule string, get func(context.Context, string) (*lifecycle.Server, error)) (*lifecycle.Server, error) {
	if !core.IsUUID(id) {
		return nil, core.NotFound("Instance %s could not be found.", id)
	}
	sv, err := get(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, core.NotFound("Instance %s could not be found.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get server %s: %w", id, err)
	}
	if !lifecycle.Nova(sv).Visible || !r.Sees(sv.ProjectID) {
		return nil, core.NotFound("Instance %s could not be found.", id)
	}
	if err := r.Authorize(rule, core.Target(sv.ProjectID, sv.UserID)); err != nil {
		return nil, err
	}
	return sv, nil
}

func (s *Service) ShowServer(w http.ResponseWriter, r *core.Request) error {
	// Read only: the rendering changes nothing.
	sv, err := s.visible(r, r.PathValue("id"), policy.ServersShow, s.Cfg.Store.ReadServer)
	if err != nil {
		return err
	}
	ports, err := s.Cfg.Store.Ports(r.Context(), sv.ID)
	if err != nil {
		return fmt.Errorf("ports of %s: %w", sv.ID, err)
	}
	view := s.renderer(r).server(sv, ports)
	if err := s.attachVolumes(r, []*lifecycle.Server{sv}, []*serverView{view}); err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, serverBody{Server: view})
	return nil
}

// DeleteServer records the user's delete and answers 204 once committed.
// Repeating it is harmless (Store.RequestDelete is idempotent).
func (s *Service) DeleteServer(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServersDelete)
	if err != nil {
		return err
	}
	id := sv.ID
	if err := lockConflict(sv, r.IsAdmin()); err != nil {
		return err
	}
	err = s.Cfg.Store.RequestDelete(r.Context(), id, r.ID, s.Cfg.Clock.Now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		return core.NotFound("Instance %s could not be found.", id)
	}
	if err != nil {
		return fmt.Errorf("delete server %s: %w", id, err)
	}
	s.Cfg.Kick(id)
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
func (s *Service) listQuery(r *core.Request) (opts store.ListOptions, empty bool, err error) {
	q := r.URL.Query()
	if err := s.listScope(r, &opts); err != nil {
		return opts, false, err
	}
	if name := q.Get("name"); len(name) > core.MaxNameFilter {
		return opts, false, core.BadRequest("Invalid input for query parameters name. Value: %.32s…. It is longer than %d characters.", name, core.MaxNameFilter)
	}
	if name := q.Get("name"); regexp.QuoteMeta(name) == name {
		opts.Name = name
	}
	opts.Limit = core.MaxPage
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return opts, false, core.BadRequest("Invalid input for query parameters limit. Value: %s. It must be a non-negative integer.", l)
		}
		if n == 0 {
			return opts, true, nil
		}
		opts.Limit = min(n, core.MaxPage)
	}
	if st := q.Get("status"); st != "" {
		st = strings.ToUpper(st)
		if !novaStatuses[st] {
			if r.MV.AtLeast(mvStrictStatus) {
				return opts, false, core.BadRequest("Invalid status value")
			}
			return opts, true, nil
		}
		var shown bool
		if opts.Status, _, shown = listStatus(st); !shown {
			return opts, true, nil
		}
	}
	if m := q.Get("marker"); m != "" {
		if !core.IsUUID(m) {
			return opts, false, core.BadRequest("marker [%s] not found", m)
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
		return nil, core.BadRequest("Invalid input for query parameters name. Value: %s. It is not a valid regular expression: %v", name, err)
	}
	return re, nil
}

// nextLinks is servers_links: a next link when the page is full, as Nova
// gives it; the other filters are carried over.
func nextLinks(r *core.Request, list []*lifecycle.Server, limit int) []core.Link {
	if len(list) == 0 || len(list) < limit {
		return nil
	}
	return nextLink(r, limit, list[len(list)-1].ID)
}

// nextLink is the request's URL with limit and marker set, as Nova's
// _get_next_link.
func nextLink(r *core.Request, limit int, marker string) []core.Link {
	q := r.URL.Query()
	q.Set("limit", strconv.Itoa(limit))
	q.Set("marker", marker)
	u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	return []core.Link{{Rel: "next", Href: core.BaseURL(r.Request) + u.String()}}
}

type serverRef struct {
	ID    string      `json:"id"`
	Name  string      `json:"name"`
	Links []core.Link `json:"links"`
}

func (s *Service) ListServers(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.ServersIndex, r.Own()); err != nil {
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
	core.WriteJSON(w, http.StatusOK, serverList[serverRef]{Servers: out, Links: nextLinks(r, list, opts.Limit)})
	return nil
}

func (s *Service) ListServersDetail(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.ServersDetail, r.Own()); err != nil {
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
		if ports, err = s.Cfg.Store.PortsOn(r.Context(), ids); err != nil {
			return fmt.Errorf("ports of %d servers: %w", len(ids), err)
		}
	}
	rd := s.renderer(r)
	rd.list = true
	out := make([]*serverView, 0, len(list))
	for _, sv := range list {
		out = append(out, rd.server(sv, ports[sv.ID]))
	}
	if err := s.attachVolumes(r, list, out); err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, serverList[*serverView]{Servers: out, Links: nextLinks(r, list, opts.Limit)})
	return nil
}

// networkName names a network id for addresses (the id itself when the
// network left the configuration).
func (s *Service) networkName(ctx context.Context, id string) string {
	if s.Cfg.NetworkNames != nil {
		return s.Cfg.NetworkNames.Name(ctx, id)
	}
	for _, n := range s.Cfg.Networks {
		if strings.EqualFold(n.ID, id) {
			return n.Name
		}
	}
	return id
}

// listScope sets which projects a listing covers: the caller's own, or
// with all_tenants (admins only, as in Nova: 403 otherwise) every project,
// or the one named by project_id or tenant_id.
func (s *Service) listScope(r *core.Request, opts *store.ListOptions) error {
	q := r.URL.Query()
	all, err := core.AllTenants(q)
	if err != nil {
		return err
	}
	if !all {
		opts.ProjectID = r.Ident.ProjectID // tenant_id is ignored without all_tenants, as in Nova
		return nil
	}
	rule := policy.ServersIndexAllTenants
	if strings.HasSuffix(r.URL.Path, "/detail") {
		rule = policy.ServersDetailAll
	}
	if err := r.Authorize(rule, r.Own()); err != nil {
		return err
	}
	opts.ProjectID = q.Get("project_id")
	if opts.ProjectID == "" {
		opts.ProjectID = q.Get("tenant_id")
	}
	return nil
}
