package ironicsim

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/clock"
)

// The admin API under /_sim/ drives the Go fault API over HTTP; see the
// package documentation for its routes and bodies. Its answers are plain
// JSON ({"error": "..."} on failure), never Ironic-shaped, and it is not
// counted in Counts.

// duration accepts "1.5s"-style strings or a number of seconds.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return errors.New("duration must be a string like \"5s\" or a number of seconds")
	}
	*d = duration(time.Duration(secs * float64(time.Second)))
	return nil
}

type adminFault struct {
	Method   string   `json:"method"`
	Path     string   `json:"path"`
	Kind     string   `json:"kind"`
	Count    int      `json:"count"`
	Fraction float64  `json:"fraction"`
	Latency  duration `json:"latency"`
}

type adminNodes struct {
	Count            int            `json:"count"`
	NamePrefix       string         `json:"name_prefix"`
	ResourceClass    string         `json:"resource_class"`
	Properties       map[string]any `json:"properties"`
	Traits           []string       `json:"traits"`
	DeployInterface  string         `json:"deploy_interface"`
	NetworkInterface string         `json:"network_interface"`
	Ports            int            `json:"ports"`
	BondPorts        int            `json:"bond_ports"`
	BondMode         string         `json:"bond_mode"`
	PhysicalNetwork  string         `json:"physical_network"`
	DeployTime       duration       `json:"deploy_time"`
	UndeployTime     duration       `json:"undeploy_time"`
}

func adminErr(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": msg})
}

func decodeAdmin(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && err.Error() != "EOF" {
		return err
	}
	return nil
}

func (s *Sim) serveAdmin(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/_sim"), "/"), "/")
	route := r.Method + " " + strings.Join(segs, "/")
	if len(segs) >= 2 && segs[0] == "nodes" {
		route = r.Method + " nodes/{node}"
		if len(segs) == 3 {
			route += "/" + segs[2]
		}
		if len(segs) > 3 {
			route = "unknown"
		}
	}
	ok := func() { writeEmpty(w, http.StatusNoContent) }
	switch route {
	case "GET counts":
		writeJSON(w, http.StatusOK, s.Counts())
	case "DELETE counts":
		s.ResetCounts()
		ok()
	case "POST faults":
		var f adminFault
		if err := decodeAdmin(r, &f); err != nil {
			adminErr(w, http.StatusBadRequest, err.Error())
			return
		}
		err := s.InjectFault(Fault{Method: f.Method, Path: f.Path, Kind: FaultKind(f.Kind), Count: f.Count,
			Fraction: f.Fraction, Latency: time.Duration(f.Latency)})
		if err != nil {
			adminErr(w, http.StatusBadRequest, err.Error())
			return
		}
		ok()
	case "DELETE faults":
		s.ClearFaults()
		ok()
	case "POST restart":
		s.Restart()
		ok()
	case "POST clock/advance":
		var body struct {
			By duration `json:"by"`
		}
		if err := decodeAdmin(r, &body); err != nil {
			adminErr(w, http.StatusBadRequest, err.Error())
			return
		}
		m, isManual := s.clk.(*clock.Manual)
		if !isManual {
			adminErr(w, http.StatusConflict, "the simulator runs on the real clock")
			return
		}
		m.Advance(time.Duration(body.By))
		ok()
	case "GET nodes":
		snaps := s.Nodes()
		out := make([]any, len(snaps))
		for i, sn := range snaps {
			out[i] = snapshotJSON(sn)
		}
		writeJSON(w, http.StatusOK, map[string]any{"nodes": out})
	case "POST nodes":
		var b adminNodes
		if err := decodeAdmin(r, &b); err != nil {
			adminErr(w, http.StatusBadRequest, err.Error())
			return
		}
		if b.Count <= 0 {
			adminErr(w, http.StatusBadRequest, "count must be positive")
			return
		}
		ids := s.AddNodes(b.Count, NodeSpec{NamePrefix: b.NamePrefix, ResourceClass: b.ResourceClass,
			Properties: b.Properties, Traits: b.Traits, DeployInterface: b.DeployInterface,
			NetworkInterface: b.NetworkInterface, Ports: b.Ports, BondPorts: b.BondPorts, BondMode: b.BondMode, PhysicalNetwork: b.PhysicalNetwork, DeployTime: time.Duration(b.DeployTime),
			UndeployTime: time.Duration(b.UndeployTime)})
		writeJSON(w, http.StatusCreated, map[string]any{"uuids": ids})
	case "GET nodes/{node}":
		sn, found := s.Node(segs[1])
		if !found {
			adminErr(w, http.StatusNotFound, "node "+segs[1]+" not found")
			return
		}
		writeJSON(w, http.StatusOK, snapshotJSON(sn))
	default:
		if strings.HasPrefix(route, "POST nodes/{node}/") {
			s.adminNodeAction(w, r, segs[1], segs[2])
			return
		}
		adminErr(w, http.StatusNotFound, "unknown admin route "+r.Method+" "+r.URL.Path)
	}
}

func (s *Sim) adminNodeAction(w http.ResponseWriter, r *http.Request, id, action string) {
	var err error
	switch action {
	case "fail-next-deploy":
		var b struct {
			LastError string `json:"last_error"`
		}
		if err := decodeAdmin(r, &b); err != nil {
			adminErr(w, http.StatusBadRequest, err.Error())
			return
		}
		err = s.FailNextDeploy(id, b.LastError)
	case "hold-deploy":
		err = s.HoldDeploy(id)
	case "release-deploy":
		err = s.ReleaseDeploy(id)
	case "delete":
		err = s.DeleteOutOfBand(id)
	case "teardown":
		err = s.TeardownOutOfBand(id)
	case "maintenance":
		var b struct {
			On     bool   `json:"on"`
			Reason string `json:"reason"`
		}
		if err := decodeAdmin(r, &b); err != nil {
			adminErr(w, http.StatusBadRequest, err.Error())
			return
		}
		err = s.SetMaintenance(id, b.On, b.Reason)
	case "remove-instance-uuid":
		err = s.RemoveInstanceUUID(id)
	case "times":
		b := struct {
			DeployTime   *duration `json:"deploy_time"`
			UndeployTime *duration `json:"undeploy_time"`
		}{}
		if err := decodeAdmin(r, &b); err != nil {
			adminErr(w, http.StatusBadRequest, err.Error())
			return
		}
		d, u := time.Duration(-1), time.Duration(-1)
		if b.DeployTime != nil {
			d = time.Duration(*b.DeployTime)
		}
		if b.UndeployTime != nil {
			u = time.Duration(*b.UndeployTime)
		}
		err = s.SetNodeTimes(id, d, u)
	default:
		adminErr(w, http.StatusNotFound, "unknown node action "+action)
		return
	}
	switch {
	case errors.Is(err, ErrNodeNotFound):
		adminErr(w, http.StatusNotFound, "node "+id+" not found")
	case errors.Is(err, ErrInvalidState):
		adminErr(w, http.StatusConflict, err.Error())
	case err != nil:
		adminErr(w, http.StatusInternalServerError, err.Error())
	default:
		writeEmpty(w, http.StatusNoContent)
	}
}

func snapshotJSON(sn NodeSnapshot) map[string]any {
	vifs := sn.VIFs
	if vifs == nil {
		vifs = []string{}
	}
	return map[string]any{
		"uuid": sn.UUID, "name": sn.Name, "resource_class": sn.ResourceClass,
		"provision_state": sn.ProvisionState, "target_provision_state": sn.TargetProvisionState,
		"power_state": sn.PowerState, "maintenance": sn.Maintenance,
		"maintenance_reason": sn.MaintenanceReason, "last_error": sn.LastError,
		"reservation": sn.Reservation, "instance_uuid": sn.InstanceUUID,
		"instance_info": sn.InstanceInfo, "deploy_interface": sn.DeployInterface,
		"network_interface": sn.NetworkInterface, "storage_interface": sn.StorageInterface,
		"vifs": vifs, "held": sn.Held,
	}
}
