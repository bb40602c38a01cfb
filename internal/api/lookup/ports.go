package lookup

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// ListPorts answers Neutron's port list for one server (?device_id=), or
// the SDK's look-up of a `--port` value by id or name (?id=, ?name=; ingot's
// ports have no names, so a name matches nothing and the CLI says "No Port
// found"); without any of them the answer is a 400, never a scan of every
// port.
func (s *Service) ListPorts(w http.ResponseWriter, r *core.Request) error {
	q := r.URL.Query()
	dev := q.Get("device_id")
	var ports []store.Port
	switch {
	case dev != "":
		if ok, err := s.portsVisible(r, dev); err != nil {
			return err
		} else if ok {
			if ports, err = s.Cfg.Store.Ports(r.Context(), dev); err != nil {
				return fmt.Errorf("ports of %s: %w", dev, err)
			}
		}
	case q.Has("id"):
		if id := q.Get("id"); core.IsUUID(id) {
			p, err := s.Cfg.Store.GetPort(r.Context(), id)
			switch {
			case err == nil:
				ok, err := s.portsVisible(r, p.ServerID)
				if err != nil {
					return err
				}
				if ok {
					ports = append(ports, p)
				}
			case !errors.Is(err, store.ErrNotFound):
				return fmt.Errorf("get port %s: %w", id, err)
			}
		}
	case q.Has("name"):
		if q.Get("name") != "" {
			break // no port of ingot's has a name
		}
		return core.BadRequest("ingot lists ports by device_id, id or a name only.")
	default:
		return core.BadRequest("ingot lists ports by device_id, id or a name only.")
	}
	if !r.Authorized {
		// Nothing was found to decide on: the caller may still list its own.
		if err := r.Authorize(policy.Ports, r.Own()); err != nil {
			return err
		}
	}
	out := make([]portView, 0, len(ports))
	for _, p := range ports {
		if q.Has("network_id") && q.Get("network_id") != p.NetworkID {
			continue
		}
		out = append(out, newPortView(p))
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Ports []portView `json:"ports"`
	}{out})
	return nil
}

// portsVisible reports whether the caller may see the ports of server id
// (its project's, or an admin's), checking the ports rule on it; an
// unknown or invisible server lists nothing, as Neutron filters by project.
func (s *Service) portsVisible(r *core.Request, serverID string) (bool, error) {
	if !core.IsUUID(serverID) {
		return false, nil
	}
	sv, err := s.Cfg.Store.GetServer(r.Context(), serverID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get server %s: %w", serverID, err)
	}
	if !r.Sees(sv.ProjectID) {
		return false, nil
	}
	if err := r.Authorize(policy.Ports, core.Target(sv.ProjectID, sv.UserID)); err != nil {
		return false, err
	}
	return true, nil
}
