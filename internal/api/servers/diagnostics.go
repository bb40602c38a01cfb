package servers

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
)

// GET /servers/{id}/diagnostics and POST /os-server-external-events, the
// two admin calls Nova's services and operators make about one server.
//
// Diagnostics: Nova's Ironic driver has none (501); ingot answers the
// standard shape of 2.48 with what it knows of the machine and its record
// (no hypervisor counters exist for a physical machine: those are null),
// below 2.48 as well since that shape was free-form.
//
// External events tell Nova that something happened to an instance
// (network-changed, volume-extended, …). ingot converges on what it reads
// from Ironic itself, so an event changes nothing; it is acknowledged per
// server as Nova does: 200 for a server with a node, 422 for one without,
// 404 for an unknown one (and 404 overall when none was known).

func (s *Service) DiagnosticsRoutes() {
	s.Compute("GET /v2.1/servers/{id}/diagnostics", s.serverDiagnostics)
	s.Compute("POST /v2.1/os-server-external-events", core.OwnRule(policy.ServerExternalEvents, s.externalEvents))
}

func (s *Service) serverDiagnostics(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServerDiagnostics)
	if err != nil {
		return err
	}
	if sv.NodeID == "" {
		return core.Conflict("Instance %s is not ready", sv.ID)
	}
	ports, err := s.Cfg.Store.Ports(r.Context(), sv.ID)
	if err != nil {
		return fmt.Errorf("ports of %s: %w", sv.ID, err)
	}
	state := "pending"
	switch lifecycle.PowerState(sv) {
	case lifecycle.PowerRunning:
		state = "running"
	case lifecycle.PowerShutdown:
		state = "shutdown"
	}
	nics := make([]nicDiagnostics, 0, len(ports))
	for _, p := range ports {
		nics = append(nics, nicDiagnostics{MACAddress: p.MAC})
	}
	vols, err := s.heldVolumes(r, sv)
	if err != nil {
		return err
	}
	disks := make([]diskDiagnostics, 1+len(vols))
	d := diagnosticsView{State: state, Driver: "ironic", Hypervisor: "ironic", ConfigDrive: true,
		NumCPUs: sv.Spec.VCPUs, NumNICs: len(nics), NumDisks: len(disks), CPUDetails: []any{}, NICDetails: nics, DiskDetails: disks}
	d.MemoryDetails.Maximum = sv.Spec.RAMMB
	core.WriteJSON(w, http.StatusOK, d)
	return nil
}

// diagnosticsView is Nova's standard diagnostics (2.48), with null for
// every figure Ironic does not give.
type diagnosticsView struct {
	ConfigDrive   bool              `json:"config_drive"`
	CPUDetails    []any             `json:"cpu_details"`
	DiskDetails   []diskDiagnostics `json:"disk_details"`
	Driver        string            `json:"driver"`
	Hypervisor    string            `json:"hypervisor"`
	HypervisorOS  *string           `json:"hypervisor_os"`
	MemoryDetails struct {
		Maximum int  `json:"maximum"`
		Used    *int `json:"used"`
	} `json:"memory_details"`
	NICDetails []nicDiagnostics `json:"nic_details"`
	NumCPUs    int              `json:"num_cpus"`
	NumDisks   int              `json:"num_disks"`
	NumNICs    int              `json:"num_nics"`
	State      string           `json:"state"`
	Uptime     *int             `json:"uptime"`
}

// nicDiagnostics is a port's entry: its MAC, every counter null.
type nicDiagnostics struct {
	MACAddress string `json:"mac_address"`
	RxDrop     *int   `json:"rx_drop"`
	RxErrors   *int   `json:"rx_errors"`
	RxOctets   *int   `json:"rx_octets"`
	RxPackets  *int   `json:"rx_packets"`
	RxRate     *int   `json:"rx_rate"`
	TxDrop     *int   `json:"tx_drop"`
	TxErrors   *int   `json:"tx_errors"`
	TxOctets   *int   `json:"tx_octets"`
	TxPackets  *int   `json:"tx_packets"`
	TxRate     *int   `json:"tx_rate"`
}

// diskDiagnostics is a disk's entry: every counter null.
type diskDiagnostics struct {
	ErrorsCount   *int `json:"errors_count"`
	ReadBytes     *int `json:"read_bytes"`
	ReadRequests  *int `json:"read_requests"`
	WriteBytes    *int `json:"write_bytes"`
	WriteRequests *int `json:"write_requests"`
}

// eventNames are Nova's external event names and the microversion each
// appeared in.
var eventNames = map[string]int{"network-changed": 0, "network-vif-plugged": 0, "network-vif-unplugged": 0,
	"network-vif-deleted": 0, "volume-extended": 51, "power-update": 76, "accelerator-request-bound": 82, "volume-reimaged": 93}

type externalEvent struct {
	Name       string  `json:"name"`
	ServerUUID string  `json:"server_uuid"`
	Status     string  `json:"status,omitempty"`
	Tag        *string `json:"tag,omitempty"`
	Code       int     `json:"code"`
}

func (s *Service) externalEvents(w http.ResponseWriter, r *core.Request) error {
	body, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	raw, ok := body["events"]
	if !ok || len(body) != 1 {
		return core.BadRequest("Invalid input for field/attribute events. 'events' is a required property (and the only one).")
	}
	var in []map[string]json.RawMessage
	if json.Unmarshal(raw, &in) != nil || len(in) == 0 {
		return core.BadRequest("Invalid input for field/attribute events. Value: %s. It is not a non-empty array of objects.", raw)
	}
	out := make([]externalEvent, 0, len(in))
	known := 0
	for _, e := range in {
		ev, err := parseEvent(e, r.MV)
		if err != nil {
			return err
		}
		sv, err := s.Cfg.Store.GetServer(r.Context(), ev.ServerUUID)
		switch {
		case err != nil || !lifecycle.Nova(sv).Visible:
			ev.Code, ev.Status = http.StatusNotFound, "failed"
		case sv.NodeID == "":
			ev.Code, ev.Status = http.StatusUnprocessableEntity, "failed"
			known++
		default:
			ev.Code = http.StatusOK
			known++
		}
		out = append(out, ev)
	}
	if known == 0 {
		return core.NotFound("No instances found for any event")
	}
	status := http.StatusOK
	for _, e := range out {
		if e.Code != http.StatusOK {
			status = http.StatusMultiStatus
		}
	}
	core.WriteJSON(w, status, struct {
		Events []externalEvent `json:"events"`
	}{out})
	return nil
}

// parseEvent checks one event as Nova's schema does.
func parseEvent(e map[string]json.RawMessage, mv core.Version) (externalEvent, error) {
	var ev externalEvent
	for k, v := range e {
		var err error
		switch k {
		case "name":
			err = json.Unmarshal(v, &ev.Name)
		case "server_uuid":
			err = json.Unmarshal(v, &ev.ServerUUID)
		case "status":
			err = json.Unmarshal(v, &ev.Status)
		case "tag":
			ev.Tag = new(string)
			err = json.Unmarshal(v, ev.Tag)
		default:
			return ev, core.BadRequest("Invalid input for field/attribute events. Additional properties are not allowed ('%s' was unexpected).", k)
		}
		if err != nil {
			return ev, core.BadRequest("Invalid input for field/attribute %s. Value: %s. It is not a string.", k, v)
		}
	}
	since, ok := eventNames[ev.Name]
	if !ok || !mv.AtLeast(since) {
		return ev, core.BadRequest("Invalid input for field/attribute name. Value: %q is not a known event.", ev.Name)
	}
	if !core.IsUUID(ev.ServerUUID) {
		return ev, core.BadRequest("Invalid input for field/attribute server_uuid. Value: %q is not a 'uuid'.", ev.ServerUUID)
	}
	switch ev.Status {
	case "":
		ev.Status = "completed"
	case "completed", "failed", "in-progress":
	default:
		return ev, core.BadRequest("Invalid input for field/attribute status. Value: %q is not one of ['failed', 'completed', 'in-progress'].", ev.Status)
	}
	return ev, nil
}
