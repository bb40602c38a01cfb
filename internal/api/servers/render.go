package servers

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/ingot-dev/ingot/internal/api/admin"
	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// serverView is a server as Nova shows it in GET /servers/{id} and
// /servers/detail; ingot's extension members only when the client asked for
// them (X-Ingot-Extensions, see extensionsHeader).
type serverView struct {
	ID             string                   `json:"id"`
	Name           string                   `json:"name"`
	Status         string                   `json:"status"`
	TenantID       string                   `json:"tenant_id"`
	UserID         string                   `json:"user_id"`
	Metadata       map[string]string        `json:"metadata"` // never nil: OSC crashes without it
	HostID         string                   `json:"hostId"`
	Image          any                      `json:"image"`
	Flavor         any                      `json:"flavor"`
	Created        string                   `json:"created"`
	Updated        string                   `json:"updated"`
	Addresses      map[string][]addressView `json:"addresses"`
	AccessIPv4     string                   `json:"accessIPv4"`
	AccessIPv6     string                   `json:"accessIPv6"`
	Links          []core.Link              `json:"links"`
	DiskConfig     string                   `json:"OS-DCF:diskConfig"`
	Progress       *int                     `json:"progress,omitempty"` // progress statuses only
	AZ             string                   `json:"OS-EXT-AZ:availability_zone"`
	ConfigDrive    string                   `json:"config_drive"`
	KeyName        *string                  `json:"key_name"`
	LaunchedAt     *string                  `json:"OS-SRV-USG:launched_at"`
	TerminatedAt   *string                  `json:"OS-SRV-USG:terminated_at"`
	Host           any                      `json:"OS-EXT-SRV-ATTR:host,omitempty"`                // admin
	InstanceName   any                      `json:"OS-EXT-SRV-ATTR:instance_name,omitempty"`       // admin
	Hypervisor     any                      `json:"OS-EXT-SRV-ATTR:hypervisor_hostname,omitempty"` // admin
	ReservationID  any                      `json:"OS-EXT-SRV-ATTR:reservation_id,omitempty"`      // 2.3
	LaunchIndex    any                      `json:"OS-EXT-SRV-ATTR:launch_index,omitempty"`        // 2.3
	Hostname       any                      `json:"OS-EXT-SRV-ATTR:hostname,omitempty"`            // 2.3
	KernelID       any                      `json:"OS-EXT-SRV-ATTR:kernel_id,omitempty"`           // 2.3
	RamdiskID      any                      `json:"OS-EXT-SRV-ATTR:ramdisk_id,omitempty"`          // 2.3
	RootDevice     any                      `json:"OS-EXT-SRV-ATTR:root_device_name,omitempty"`    // 2.3
	UserData       any                      `json:"OS-EXT-SRV-ATTR:user_data,omitempty"`           // 2.3
	TaskState      *string                  `json:"OS-EXT-STS:task_state"`
	VMState        string                   `json:"OS-EXT-STS:vm_state"`
	PowerState     int                      `json:"OS-EXT-STS:power_state"`
	Volumes        []attachedVolume         `json:"os-extended-volumes:volumes_attached"`
	SecurityGroups []map[string]string      `json:"security_groups,omitempty"`            // left out once every group is removed
	Locked         any                      `json:"locked,omitempty"`                     // 2.9
	HostStatus     any                      `json:"host_status,omitempty"`                // 2.16
	Description    any                      `json:"description,omitempty"`                // 2.19
	Tags           any                      `json:"tags,omitempty"`                       // 2.26
	TrustedCerts   any                      `json:"trusted_image_certificates,omitempty"` // 2.63
	ServerGroups   any                      `json:"server_groups,omitempty"`              // 2.71
	LockedReason   any                      `json:"locked_reason,omitempty"`              // 2.73
	Fault          *faultView               `json:"fault,omitempty"`

	IngotPhase    lifecycle.Phase  `json:"ingot:phase,omitempty"`
	IngotFault    *lifecycle.Fault `json:"ingot:fault,omitempty"`
	IngotAttempts any              `json:"ingot:attempts,omitempty"` // []lifecycle.Attempt, never null
}

type addressView struct {
	Addr    string `json:"addr"`
	Version int    `json:"version"`
	Type    string `json:"OS-EXT-IPS:type"`
	MAC     string `json:"OS-EXT-IPS-MAC:mac_addr"`
}

type faultView struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Details string `json:"details,omitempty"`
	Created string `json:"created"`
}

// refView is the {"id", "links"} form of an image, or of a flavor below 2.47.
type refView struct {
	ID    string      `json:"id"`
	Links []core.Link `json:"links"`
}

// embeddedFlavor is the flavor as shown from 2.47 on.
type embeddedFlavor struct {
	OriginalName string            `json:"original_name"`
	VCPUs        int               `json:"vcpus"`
	RAM          int               `json:"ram"`
	Disk         int               `json:"disk"`
	Ephemeral    int               `json:"ephemeral"`
	Swap         int               `json:"swap"`
	ExtraSpecs   map[string]string `json:"extra_specs"`
}

// hostID is Nova's opaque per-project host id: a hash of project and the
// compute host of the server's node (as Nova's Ironic driver, whose servers
// under one nova-compute share it: affinity members show the same one), ""
// while the server has no node.
func hostID(projectID, node string, computes []store.Service) string {
	if node == "" {
		return ""
	}
	return opaqueHost(projectID, admin.NodeHost(node, computes))
}

// nodeHostID is an event's hostId: the same hash over the node itself.
func nodeHostID(projectID, node string) string {
	if node == "" {
		return ""
	}
	return opaqueHost(projectID, node)
}

func opaqueHost(projectID, host string) string {
	sum := sha256.Sum224([]byte(projectID + host))
	return hex.EncodeToString(sum[:])
}

// renderer turns server records into views for one request.
type renderer struct {
	base     string // scheme://host
	mv       core.Version
	catalog  *catalog.Catalog
	netName  func(id string) string
	flavorOf func(id string) (store.Flavor, bool)
	flavors  map[string]any // flavor member by id, built once per request
	// zones is the request's admin snapshot's (read once).
	zones       func() admin.Zones
	computeSvcs []store.Service // computes(), non-nil once listed
	// can checks a rule on a server (the members only some roles see).
	can func(rule string, sv *lifecycle.Server) bool
	// admin: the caller is an admin (fault details, as Nova's is_admin).
	admin bool
	// extensions: the client asked for ingot's extension members.
	extensions bool
	// list: the body is a /servers/detail entry (no server_groups there).
	list bool
	// groupsOf is the ids of the server groups the server is a member of.
	groupsOf func(id string) []string
}

func (s *Service) renderer(r *core.Request) *renderer {
	// The admin snapshot is read once per request, when a server is first
	// rendered.
	snapshot := sync.OnceValues(func() (admin.Snapshot, bool) {
		sn, err := s.admin.Snapshot(r)
		if err != nil {
			// The zone is one member of the answer: show the default
			// rather than fail a server read for it.
			s.Log.Warn("read availability zones and flavors", "err", err)
		}
		return sn, err == nil
	})
	return &renderer{base: core.BaseURL(r.Request), mv: r.MV, catalog: s.Cfg.Catalog,
		netName: func(id string) string { return s.networkName(r.Context(), id) },
		flavorOf: func(id string) (store.Flavor, bool) {
			if sn, read := snapshot(); read {
				return sn.Flavor(id)
			}
			f, err := s.Cfg.Store.GetFlavor(r.Context(), id)
			return f, err == nil
		},
		groupsOf: func(id string) []string {
			gs, err := s.Cfg.Store.ServerGroupsOf(r.Context(), id)
			if err != nil {
				s.Log.Warn("read a server's groups", "server", id, "err", err)
			}
			return append([]string{}, gs...)
		},
		can:   memoCan(r),
		admin: r.IsAdmin(), extensions: core.WantsExtensions(r.Request),
		zones: func() admin.Zones {
			sn, _ := snapshot()
			return sn.Zones
		}}
}

// canKey is one policy question of a request: a rule on a server's
// project and user, all a server target holds.
type canKey struct{ rule, project, user string }

// memoCan is r.Can on servers, each question answered once per request:
// a page's servers mostly share their project and user, and the answer
// depends on nothing else (the caller's credentials are the request's).
func memoCan(r *core.Request) func(rule string, sv *lifecycle.Server) bool {
	seen := map[canKey]bool{}
	return func(rule string, sv *lifecycle.Server) bool {
		k := canKey{rule, sv.ProjectID, sv.UserID}
		ok, done := seen[k]
		if !done {
			ok = r.Can(rule, core.Target(sv.ProjectID, sv.UserID))
			seen[k] = ok
		}
		return ok
	}
}

// computes is the compute services of the request's zones, listed once.
func (rd *renderer) computes() []store.Service {
	if rd.computeSvcs == nil {
		rd.computeSvcs = append([]store.Service{}, store.ComputeServices(rd.zones().Services)...)
	}
	return rd.computeSvcs
}

func (rd *renderer) serverLinks(id string) []core.Link {
	return []core.Link{
		{Rel: "self", Href: rd.base + "/v2.1/servers/" + id},
		{Rel: "bookmark", Href: rd.base + "/servers/" + id},
	}
}

func (rd *renderer) server(sv *lifecycle.Server, ports []store.Port) *serverView {
	st := lifecycle.Nova(sv)
	v := &serverView{
		ID: sv.ID, Name: sv.Name, Status: st.Status,
		TenantID: sv.ProjectID, UserID: sv.UserID,
		Metadata:       sv.Spec.Metadata,
		HostID:         hostID(sv.ProjectID, sv.NodeID, rd.computes()),
		Image:          refView{ID: sv.Spec.ImageID, Links: []core.Link{{Rel: "bookmark", Href: rd.base + "/images/" + sv.Spec.ImageID}}},
		Flavor:         rd.flavor(sv.Spec.FlavorID),
		Created:        core.FormatTime(sv.CreatedAt),
		Updated:        core.FormatTime(sv.UpdatedAt),
		Addresses:      rd.addresses(ports),
		AccessIPv4:     sv.Spec.AccessIPv4,
		AccessIPv6:     sv.Spec.AccessIPv6,
		Links:          rd.serverLinks(sv.ID),
		DiskConfig:     diskConfig(sv.Spec.DiskConfig),
		AZ:             rd.zones().OfNode(sv.NodeID),
		ConfigDrive:    "True",
		KeyName:        core.StrPtr(sv.Spec.KeyName),
		TaskState:      core.StrPtr(st.TaskState),
		VMState:        st.VMState,
		PowerState:     lifecycle.PowerState(sv),
		Volumes:        []attachedVolume{},
		SecurityGroups: groupNames(sv),
	}
	if v.Metadata == nil {
		v.Metadata = map[string]string{}
	}
	if rd.extensions {
		v.IngotPhase, v.IngotFault, v.IngotAttempts = sv.Phase, sv.Fault, sv.Attempts
		if sv.Attempts == nil {
			v.IngotAttempts = []lifecycle.Attempt{}
		}
	}
	if p, ok := progress(sv, st); ok {
		v.Progress = &p
	}
	extended := rd.can(policy.ExtendedAttributes, sv)
	if extended {
		v.InstanceName, v.Host, v.Hypervisor = "instance-"+sv.ID, core.OrNull(""), core.OrNull(sv.NodeID)
		if sv.NodeID != "" {
			v.Host = admin.NodeHost(sv.NodeID, rd.computes())
		}
	}
	if !sv.LaunchedAt.IsZero() {
		v.LaunchedAt = core.StrPtr(sv.LaunchedAt.UTC().Format(core.NovaUsecTime))
	}
	if st.Status == "ERROR" && sv.Fault != nil {
		v.Fault = rd.fault(sv)
	}
	if sv.Spec.ImageID == "" {
		v.Image = "" // booted from a volume: Nova shows an empty string
	}
	rd.versioned(v, sv, extended)
	return v
}

// rootDeviceName is what Nova shows for an Ironic server's root device.
const rootDeviceName = "/dev/sda"

// versioned adds the members that only some microversions carry; the
// OS-EXT-SRV-ATTR ones only for admins (from 2.90 everyone sees the hostname).
func (rd *renderer) versioned(v *serverView, sv *lifecycle.Server, admin bool) {
	mv := rd.mv
	if mv.AtLeast(mvHostname) && !admin {
		hostname := sv.Spec.Hostname
		if hostname == "" {
			hostname = sv.Name
		}
		v.Hostname = hostname
	}
	if mv.AtLeast(mvExtendedAttrs) && admin {
		v.ReservationID = reservationOf(sv)
		v.LaunchIndex = sv.Spec.LaunchIndex
		v.Hostname = hostnameOf(sv) // what the node's config drive gets
		v.KernelID, v.RamdiskID = "", ""
		v.RootDevice = core.JSONNull
		if sv.NodeID != "" || !sv.LaunchedAt.IsZero() {
			// Nova's compute manager names the root device once the build
			// reaches the host; the Ironic driver does not, so Nova's
			// default (compute utils get_next_device_name) applies.
			v.RootDevice = rootDeviceName
		}
		v.UserData = core.OrNull(sv.Spec.UserData)
	}
	if mv.AtLeast(mvLocked) {
		v.Locked = sv.Lock.Locked
	}
	if mv.AtLeast(mvHostStatus) && rd.can(policy.ServersShowHostStatus, sv) {
		v.HostStatus = ""
		if sv.NodeID != "" {
			v.HostStatus = "UP"
		}
	}
	if mv.AtLeast(mvDescription) {
		v.Description = core.JSONNull
		if d := sv.Spec.Description; d != nil {
			v.Description = *d
		}
	}
	if mv.AtLeast(mvTags) {
		v.Tags = tagsOf(sv)
	}
	if mv.AtLeast(mvTrustedCerts) {
		v.TrustedCerts = core.JSONNull
	}
	if mv.AtLeast(mvServerGroups) && !rd.list {
		v.ServerGroups = []string{}
		if sv.Spec.Group != nil {
			// The membership, not the spec: a deleted group has none (Nova
			// shows [] then).
			v.ServerGroups = rd.groupsOf(sv.ID)
		}
	}
	if mv.AtLeast(mvLockReason) {
		v.LockedReason = core.OrNull(sv.Lock.Reason)
	}
}

// flavor is the server's flavor: a reference below 2.47, embedded from 2.47
// on (original_name is required there by OSC's list). A page of servers
// shares a handful of flavors, so each is built once per request.
func (rd *renderer) flavor(id string) any {
	if v, ok := rd.flavors[id]; ok {
		return v
	}
	if rd.flavors == nil {
		rd.flavors = map[string]any{}
	}
	v := rd.buildFlavor(id)
	rd.flavors[id] = v
	return v
}

func (rd *renderer) buildFlavor(id string) any {
	if !rd.mv.AtLeast(mvEmbeddedFlavor) {
		return refView{ID: id, Links: []core.Link{{Rel: "bookmark", Href: rd.base + "/flavors/" + id}}}
	}
	f, ok := rd.flavorOf(id)
	if !ok {
		// The flavor was deleted after the server was created: show what
		// the server record knows.
		return embeddedFlavor{OriginalName: id, ExtraSpecs: map[string]string{}}
	}
	specs := f.ExtraSpecs
	if specs == nil {
		specs = map[string]string{}
	}
	return embeddedFlavor{OriginalName: f.Name, VCPUs: f.VCPUs, RAM: f.RAMMB, Disk: f.DiskGB,
		Ephemeral: f.EphemeralGB, Swap: f.SwapMB, ExtraSpecs: specs}
}

func (rd *renderer) addresses(ports []store.Port) map[string][]addressView {
	out := make(map[string][]addressView, len(ports))
	for _, p := range ports {
		if p.IP == "" {
			continue
		}
		name := rd.netName(p.NetworkID)
		out[name] = append(out[name], addressView{Addr: p.IP, Version: 4, Type: "fixed", MAC: p.MAC})
	}
	return out
}

// fault is Nova's fault of an ERROR server: code 500, a message that starts
// with ingot's reason code ("node_deleted: …"), so a client without the
// extension members still knows why, and the details only for admins, as
// Nova shows the details of a 500 fault (they name nodes and steps).
func (rd *renderer) fault(sv *lifecycle.Server) *faultView {
	f := &faultView{Code: 500, Message: string(sv.Fault.Reason) + ": " + sv.Fault.Message,
		Created: core.FormatTime(sv.Fault.At)}
	if sv.Fault.Reason == "" {
		f.Message = sv.Fault.Message
	}
	if rd.admin {
		f.Details = faultDetails(sv)
	}
	return f
}

// faultDetails is Nova's fault "details": here the reason, the failing node
// and step, and every failed attempt, so an operator needs nothing else.
func faultDetails(sv *lifecycle.Server) string {
	f := sv.Fault
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", f.Reason, f.Message)
	if f.Node != "" || f.Step != "" {
		fmt.Fprintf(&b, " (node %s, step %s)", orDash(f.Node), orDash(string(f.Step)))
	}
	for i, a := range sv.Attempts {
		fmt.Fprintf(&b, "\nattempt %d: node %s, step %s, %s: %s", i+1, orDash(a.Node), orDash(string(a.Step)), a.Reason, a.Message)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// progress estimates Nova's build progress from the phase (OSC prints it
// while waiting): 100 when ACTIVE, a step count while building, 0 while
// rebuilding. Nova shows the member only in its progress statuses (ACTIVE,
// BUILD, REBUILD, RESIZE, VERIFY_RESIZE, MIGRATING): ok is false otherwise.
func progress(sv *lifecycle.Server, st lifecycle.NovaState) (int, bool) {
	switch st.Status {
	case "ACTIVE":
		return 100, true
	case "REBUILD":
		return 0, true
	case "BUILD":
	default:
		return 0, false
	}
	switch sv.Phase {
	case lifecycle.PhaseReserving:
		return 10, true
	case lifecycle.PhaseNetworking:
		return 25, true
	case lifecycle.PhaseDeploying:
		return 50, true
	}
	return 0, true
}
