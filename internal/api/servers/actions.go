package servers

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// Instance actions are served for deleted servers too: `openstack server
// event list` calls them even when its look-up of the server failed, and
// the story of a deleted server is exactly what an operator asks for.

type actionView struct {
	Action       string  `json:"action"`
	InstanceUUID string  `json:"instance_uuid"`
	Message      *string `json:"message"`
	ProjectID    string  `json:"project_id"`
	RequestID    string  `json:"request_id"`
	StartTime    string  `json:"start_time"`
	UserID       string  `json:"user_id"`
	UpdatedAt    *string `json:"updated_at,omitempty"` // 2.58
	Events       []any   `json:"events,omitempty"`     // detail only
}

type eventView struct {
	Event      string  `json:"event"`
	StartTime  *string `json:"start_time"`
	FinishTime *string `json:"finish_time"`
	Result     *string `json:"result"`
	Traceback  *string `json:"traceback"`
	Host       any     `json:"host,omitempty"`    // 2.62
	HostID     any     `json:"hostId,omitempty"`  // 2.62
	Details    any     `json:"details,omitempty"` // 2.84
}

func usecTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(core.NovaUsecTime)
	return &s
}

// anyServer loads a server whether deleted or not and checks rule on it:
// 404 for unknown ids and another project's servers (unless admin).
func (s *Service) anyServer(r *core.Request, id, rule string) (*lifecycle.Server, error) {
	if !core.IsUUID(id) {
		return nil, core.NotFound("Instance %s could not be found.", id)
	}
	sv, err := s.Cfg.Store.GetServer(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, core.NotFound("Instance %s could not be found.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get server %s: %w", id, err)
	}
	if !r.Sees(sv.ProjectID) {
		return nil, core.NotFound("Instance %s could not be found.", id)
	}
	if err := r.Authorize(rule, core.Target(sv.ProjectID, sv.UserID)); err != nil {
		return nil, err
	}
	return sv, nil
}

func (s *Service) actionView(r *core.Request, a store.ActionRecord, events []lifecycle.Event) actionView {
	v := actionView{
		Action: a.Action, InstanceUUID: a.ServerID, Message: core.StrPtr(a.Message),
		ProjectID: a.ProjectID, RequestID: a.RequestID, UserID: a.UserID,
		StartTime: a.StartTime.UTC().Format(core.NovaUsecTime),
	}
	if v.Message == nil {
		// Nova sets an action's message to "Error" when one of its events
		// fails, which is what `openstack server event list` shows.
		for _, e := range events {
			if e.Result == lifecycle.ResultError {
				v.Message = core.StrPtr("Error")
				break
			}
		}
	}
	if r.MV.AtLeast(mvActionUpdatedAt) {
		updated := a.StartTime
		for _, e := range events {
			if e.Finish.After(updated) {
				updated = e.Finish
			}
			if e.Start.After(updated) {
				updated = e.Start
			}
		}
		v.UpdatedAt = usecTime(updated)
		if v.UpdatedAt == nil {
			v.UpdatedAt = &v.StartTime
		}
	}
	return v
}

// ListActions answers GET /servers/{id}/os-instance-actions, newest first;
// from 2.58 a page of it (actionsQuery).
func (s *Service) ListActions(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.anyServer(r, r.PathValue("id"), policy.ActionsList)
	if err != nil {
		return err
	}
	q, err := parseActionsQuery(r)
	if err != nil {
		return err
	}
	actions, err := s.Cfg.Store.Actions(r.Context(), sv.ID)
	if err != nil {
		return fmt.Errorf("actions of %s: %w", sv.ID, err)
	}
	views := make([]actionView, 0, len(actions))
	for _, a := range actions {
		// message and updated_at (2.58) need the events; a server has two
		// actions at most.
		events, err := s.Cfg.Store.Events(r.Context(), sv.ID, a.RequestID)
		if err != nil {
			return fmt.Errorf("events of %s/%s: %w", sv.ID, a.RequestID, err)
		}
		views = append(views, s.actionView(r, a, events))
	}
	if !q.paged {
		core.WriteJSON(w, http.StatusOK, actionsBody{InstanceActions: views})
		return nil
	}
	out, err := q.page(views)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, actionsBody{InstanceActions: out, Links: actionLinks(r, out, q.limit)})
	return nil
}

func (s *Service) ShowAction(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.anyServer(r, r.PathValue("id"), policy.ActionsShow)
	if err != nil {
		return err
	}
	reqID := r.PathValue("req")
	actions, err := s.Cfg.Store.Actions(r.Context(), sv.ID)
	if err != nil {
		return fmt.Errorf("actions of %s: %w", sv.ID, err)
	}
	for _, a := range actions {
		if a.RequestID != reqID {
			continue
		}
		events, err := s.Cfg.Store.Events(r.Context(), sv.ID, reqID)
		if err != nil {
			return fmt.Errorf("events of %s/%s: %w", sv.ID, reqID, err)
		}
		v := s.actionView(r, a, events)
		// Events: from 2.51 for everyone, before that for whom the events
		// rule lets (as Nova).
		if r.MV.AtLeast(mvEventsForAll) || r.Can(policy.ActionsEvents, core.Target(sv.ProjectID, sv.UserID)) {
			events = mergeEvents(events)
			v.Events = make([]any, 0, len(events))
			for _, e := range events {
				v.Events = append(v.Events, s.eventView(r, sv, e))
			}
		}
		core.WriteJSON(w, http.StatusOK, actionBody{InstanceAction: v})
		return nil
	}
	return core.NotFound("Action for request_id %s on instance %s not found", reqID, sv.ID)
}

// eventView is one event; its host is the node the step acted on, and its
// hostId that node's (not its compute host's, as the server's is): the
// console tells a member's attempts apart by it.
func (s *Service) eventView(r *core.Request, sv *lifecycle.Server, e lifecycle.Event) eventView {
	v := eventView{Event: e.Name, StartTime: usecTime(e.Start), FinishTime: usecTime(e.Finish),
		Result: core.StrPtr(e.Result)}
	t := core.Target(sv.ProjectID, sv.UserID)
	if r.MV.AtLeast(mvEventHost) {
		v.HostID = nodeHostID(sv.ProjectID, e.Node)
		if r.Can(policy.ActionsEvents, t) {
			v.Host = core.OrNull(e.Node) // the node is for admins, as Nova's host
		}
	}
	if r.MV.AtLeast(mvEventDetails) && r.Can(policy.ActionsEventDetails, t) {
		v.Details = core.OrNull(e.Details)
	}
	return v
}

// mergeEvents folds the record of a step's start (no result, no finish)
// into the next record of the same step on the same node that carries its
// outcome, so a step reads as one event with start, finish and result, as
// in Nova, where an event row is started and later finished. A start with
// no outcome yet stays as it is: the step is still running.
func mergeEvents(events []lifecycle.Event) []lifecycle.Event {
	out := make([]lifecycle.Event, 0, len(events))
	consumed := make([]bool, len(events))
	for i, e := range events {
		if consumed[i] {
			continue
		}
		if e.Result == "" && e.Finish.IsZero() {
			for j := i + 1; j < len(events); j++ {
				f := events[j]
				if consumed[j] || f.Name != e.Name || f.Node != e.Node {
					continue
				}
				if f.Result == "" && f.Finish.IsZero() {
					break // started again before finishing: keep both as recorded
				}
				consumed[j] = true
				start := e.Start
				if start.IsZero() {
					start = f.Start
				}
				e.Result, e.Finish, e.Start = f.Result, f.Finish, start
				switch {
				case e.Details == "":
					e.Details = f.Details
				case f.Details != "" && f.Details != e.Details:
					e.Details += "; " + f.Details
				}
				break
			}
		}
		out = append(out, e)
	}
	return out
}
