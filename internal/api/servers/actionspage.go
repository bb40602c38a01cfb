package servers

import (
	"time"

	"github.com/ingot-dev/ingot/internal/api/core"
)

// maxActionsPage is Nova's [api] max_limit, the page size without limit.
const maxActionsPage = 1000

// actionsQuery is the 2.58 query of an instance-action list: limit,
// marker (a request id), changes-since and, from 2.66, changes-before, on
// the actions' updated_at; no other parameter.
type actionsQuery struct {
	paged         bool // 2.58: the query applies
	limit         int
	marker        string
	hasMarker     bool
	since, before time.Time
}

func parseActionsQuery(r *core.Request) (actionsQuery, error) {
	if !r.MV.AtLeast(mvActionUpdatedAt) {
		return actionsQuery{}, nil
	}
	q := actionsQuery{paged: true, limit: maxActionsPage}
	vals := r.URL.Query()
	for k, vs := range vals {
		switch {
		case k == "limit" || k == "marker" || k == "changes-since" || k == "changes-before" && r.MV.AtLeast(mvChangesBefore):
			if len(vs) > 1 {
				return q, core.BadRequest("Invalid input for query parameters %s. Value: %v. %v is not of type 'string'", k, vs, vs)
			}
		default:
			return q, core.BadRequest("Invalid input for query parameters %s. Additional properties are not allowed ('%s' was unexpected)", k, k)
		}
	}
	var err error
	if vals.Has("limit") {
		if q.limit, err = core.IntParam(vals.Get("limit"), "limit"); err != nil {
			return q, err
		}
		q.limit = min(q.limit, maxActionsPage)
	}
	q.marker, q.hasMarker = vals.Get("marker"), vals.Has("marker")
	if vals.Has("changes-since") {
		if q.since, err = parseISOTime("changes-since", vals.Get("changes-since")); err != nil {
			return q, err
		}
	}
	if vals.Has("changes-before") && r.MV.AtLeast(mvChangesBefore) {
		if q.before, err = parseISOTime("changes-before", vals.Get("changes-before")); err != nil {
			return q, err
		}
		if !q.since.IsZero() && q.before.Before(q.since) {
			return q, core.BadRequest("The value of changes-since must be less than or equal to changes-before.")
		}
	}
	return q, nil
}

// page filters views (newest first, with updated_at) by the changes
// window, then takes limit of them after the marker, as Nova's
// actions_get: a marker that names no action of the server is a 400.
func (q actionsQuery) page(views []actionView) ([]actionView, error) {
	start := 0
	if q.hasMarker {
		start = -1
		for i, v := range views {
			if v.RequestID == q.marker {
				start = i + 1
				break
			}
		}
		if start < 0 {
			return nil, core.BadRequest("Marker %s could not be found.", q.marker)
		}
	}
	out := []actionView{}
	for _, v := range views[start:] {
		if len(out) == q.limit {
			break
		}
		updated, err := time.Parse(core.NovaUsecTime, *v.UpdatedAt)
		if err != nil {
			return nil, err
		}
		if !q.since.IsZero() && updated.Before(q.since) || !q.before.IsZero() && updated.After(q.before) {
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

// actionLinks is Nova's links of a full page: next, with the last
// action's request id as the marker.
func actionLinks(r *core.Request, page []actionView, limit int) []core.Link {
	if len(page) == 0 || len(page) < limit {
		return nil
	}
	return nextLink(r, limit, page[len(page)-1].RequestID)
}
