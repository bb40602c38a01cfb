package servers

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/ingot-dev/ingot/internal/api/admin"
	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// page loads one page of servers. The filters the store does not apply
// (specFilter) are applied here: the store is read in pages of maxPage and
// filtered until the page is full or the store is exhausted, so paging by
// marker stays exact (the rarely used filter pays the scan, not the rest).
func (s *Service) page(r *core.Request) ([]*lifecycle.Server, store.ListOptions, error) {
	opts, empty, err := s.listQuery(r)
	if err != nil || empty {
		return nil, opts, err
	}
	f, err := s.specFilter(r)
	if err != nil {
		return nil, opts, err
	}
	_, refine, _ := listStatus(opts.Status)
	if f == nil && !refine {
		list, err := s.list(r, opts)
		return list, opts, err
	}
	want, scan := opts.Limit, opts
	scan.Limit = core.MaxPage
	status := func(*lifecycle.Server) bool { return true }
	if refine {
		status = statusMatch(opts.Status)
	}
	if f == nil {
		// Only the status needs refining, which drops few rows: read
		// pages of the size asked for.
		scan.Limit = want
		f = &listFilter{}
	}
	var out []*lifecycle.Server
	for len(out) < want {
		batch, err := s.list(r, scan)
		if err != nil {
			return nil, opts, err
		}
		var ports map[string][]store.Port
		if f.needsPorts() && len(batch) > 0 {
			ids := make([]string, len(batch))
			for i, sv := range batch {
				ids[i] = sv.ID
			}
			if ports, err = s.Cfg.Store.PortsOn(r.Context(), ids); err != nil {
				return nil, opts, fmt.Errorf("ports of %d servers: %w", len(ids), err)
			}
		}
		for _, sv := range batch {
			if status(sv) && f.match(sv, ports[sv.ID]) {
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

func (s *Service) list(r *core.Request, opts store.ListOptions) ([]*lifecycle.Server, error) {
	list, err := s.Cfg.Store.ListServers(r.Context(), opts)
	if errors.Is(err, store.ErrNotFound) && opts.Marker != "" {
		return nil, core.BadRequest("marker [%s] not found", opts.Marker)
	}
	if err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	return list, nil
}

// listFilter is the part of a listing's query the store does not apply.
type listFilter struct {
	image, flavor string
	name          *regexp.Regexp
	reservation   string
	// ip and ip6 are Nova's: a regular expression matched at the start of
	// any IPv4 (ip) or IPv6 (ip6) address of the server.
	ip, ip6 *regexp.Regexp
	// host and node (admins only) are the compute host and the node.
	host, node *string
	// computes are the compute services the host filter maps nodes over.
	computes []store.Service
}

func (f *listFilter) needsPorts() bool { return f.ip != nil || f.ip6 != nil }

func (f *listFilter) match(sv *lifecycle.Server, ports []store.Port) bool {
	if f.image != "" && !strings.EqualFold(sv.Spec.ImageID, f.image) ||
		f.flavor != "" && sv.Spec.FlavorID != f.flavor ||
		f.name != nil && !f.name.MatchString(sv.Name) ||
		f.reservation != "" && reservationOf(sv) != f.reservation {
		return false
	}
	if f.host != nil {
		host := ""
		if sv.NodeID != "" {
			host = admin.NodeHost(sv.NodeID, f.computes)
		}
		if host != *f.host {
			return false
		}
	}
	if f.node != nil && sv.NodeID != *f.node {
		return false
	}
	if f.needsPorts() {
		return addressMatch(ports, f.ip, f.ip6)
	}
	return true
}

// addressMatch: some address of the ports matches its family's pattern.
func addressMatch(ports []store.Port, ip, ip6 *regexp.Regexp) bool {
	for _, p := range ports {
		if p.IP == "" {
			continue
		}
		re := ip
		if strings.Contains(p.IP, ":") {
			re = ip6
		}
		if re != nil && re.MatchString(p.IP) {
			return true
		}
	}
	return false
}

// specFilter builds the filter of a listing the store does not apply: image
// and flavor (by id, or by a name the catalogue knows), a name pattern,
// reservation_id, ip and ip6 (ip6 from 2.5 for non-admins), and host and
// node for admins (ignored for others, as Nova ignores the filters a
// non-admin may not use). nil when there is none.
func (s *Service) specFilter(r *core.Request) (*listFilter, error) {
	q := r.URL.Query()
	f := &listFilter{image: refID(q.Get("image")), flavor: refID(q.Get("flavor")), reservation: q.Get("reservation_id")}
	var err error
	if f.name, err = nameRE(q.Get("name")); err != nil {
		return nil, err
	}
	allFilters := r.Can(policy.ServersAllowAllFilters, r.Own())
	if f.ip, err = addressRE(q, "ip"); err != nil {
		return nil, err
	}
	if allFilters || r.MV.AtLeast(mvIP6Filter) {
		if f.ip6, err = addressRE(q, "ip6"); err != nil {
			return nil, err
		}
	}
	if allFilters {
		for key, dst := range map[string]**string{"host": &f.host, "node": &f.node} {
			if q.Has(key) {
				v := q.Get(key)
				*dst = &v
			}
		}
	}
	if f.image == "" && f.flavor == "" && f.name == nil && f.reservation == "" && f.ip == nil && f.ip6 == nil &&
		f.host == nil && f.node == nil {
		return nil, nil
	}
	if f.host != nil {
		all, err := s.Cfg.Store.ListServices(r.Context())
		if err != nil {
			return nil, fmt.Errorf("list services: %w", err)
		}
		f.computes = store.ComputeServices(all)
	}
	if img, ok := s.Cfg.Catalog.Image(f.image); ok {
		f.image = img.ID
	}
	if f.flavor != "" {
		// Flavors live in the store (configured ones and those admins made).
		if fl, ok, err := s.flavors.FindFlavor(r.Context(), r, f.flavor); err != nil {
			return nil, err
		} else if ok {
			f.flavor = fl.ID
		}
	}
	return f, nil
}

// addressRE compiles the ip or ip6 filter, anchored at the start as
// Python's re.match is.
func addressRE(q map[string][]string, key string) (*regexp.Regexp, error) {
	v, ok := q[key]
	if !ok || len(v) == 0 || v[0] == "" {
		return nil, nil
	}
	if len(v[0]) > core.MaxNameFilter {
		return nil, core.BadRequest("Invalid input for query parameters %s. Value: %.32s…. It is longer than %d characters.", key, v[0], core.MaxNameFilter)
	}
	re, err := regexp.Compile("^(?:" + v[0] + ")")
	if err != nil {
		return nil, core.BadRequest("Invalid input for query parameters %s. Value: %s. It is not a valid regular expression: %v", key, v[0], err)
	}
	return re, nil
}
