package novanotify

import (
	"maps"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// Versions of Nova's notification objects whose fields the payloads carry.
const (
	namespace             = "nova"
	versionAction         = "1.7"  // InstanceActionPayload
	versionCreate         = "1.11" // InstanceCreatePayload
	versionRebuild        = "1.8"  // InstanceActionRebuildPayload
	versionRescue         = "1.2"  // InstanceActionRescuePayload
	versionVolume         = "1.5"  // InstanceActionVolumePayload
	versionUpdate         = "1.8"  // InstanceUpdatePayload
	versionFlavor         = "1.4"  // FlavorPayload
	versionStateUpdate    = "1.0"  // InstanceStateUpdatePayload
	versionException      = "1.1"  // ExceptionPayload
	versionAuditPeriod    = "1.0"  // AuditPeriodPayload
	payloadTimeLayout     = "2006-01-02T15:04:05Z"
	availabilityZoneNova  = "nova"
	defaultAutoDiskConfig = "MANUAL"
)

// Object is a versioned object as Nova serializes it.
type Object struct {
	Name      string `json:"nova_object.name"`
	Namespace string `json:"nova_object.namespace"`
	Version   string `json:"nova_object.version"`
	Data      any    `json:"nova_object.data"`
}

func object(name, version string, data any) Object {
	return Object{Name: name, Namespace: namespace, Version: version, Data: data}
}

// instance is InstancePayload's fields.
type instance struct {
	UUID                   string            `json:"uuid"`
	UserID                 string            `json:"user_id"`
	TenantID               string            `json:"tenant_id"`
	ReservationID          string            `json:"reservation_id"`
	DisplayName            string            `json:"display_name"`
	DisplayDescription     *string           `json:"display_description"`
	HostName               string            `json:"host_name"`
	Host                   *string           `json:"host"`
	Node                   *string           `json:"node"`
	OSType                 *string           `json:"os_type"`
	Architecture           *string           `json:"architecture"`
	AvailabilityZone       string            `json:"availability_zone"`
	Flavor                 Object            `json:"flavor"`
	ImageUUID              string            `json:"image_uuid"`
	KeyName                *string           `json:"key_name"`
	KernelID               string            `json:"kernel_id"`
	RamdiskID              string            `json:"ramdisk_id"`
	CreatedAt              *string           `json:"created_at"`
	LaunchedAt             *string           `json:"launched_at"`
	TerminatedAt           *string           `json:"terminated_at"`
	DeletedAt              *string           `json:"deleted_at"`
	UpdatedAt              *string           `json:"updated_at"`
	State                  string            `json:"state"`
	PowerState             string            `json:"power_state"`
	TaskState              *string           `json:"task_state"`
	Progress               int               `json:"progress"`
	IPAddresses            []any             `json:"ip_addresses"`
	BlockDevices           []any             `json:"block_devices"`
	Metadata               map[string]string `json:"metadata"`
	Locked                 bool              `json:"locked"`
	AutoDiskConfig         string            `json:"auto_disk_config"`
	RequestID              string            `json:"request_id"`
	ActionInitiatorUser    string            `json:"action_initiator_user"`
	ActionInitiatorProject string            `json:"action_initiator_project"`
}

// action is InstanceActionPayload: an instance and its fault.
type action struct {
	instance
	Fault *Object `json:"fault"`
}

// create is InstanceCreatePayload.
type create struct {
	action
	Keypairs                 []any    `json:"keypairs"`
	Tags                     []string `json:"tags"`
	TrustedImageCertificates []string `json:"trusted_image_certificates"`
	InstanceName             string   `json:"instance_name"`
}

// rebuild is InstanceActionRebuildPayload.
type rebuild struct {
	action
	TrustedImageCertificates []string `json:"trusted_image_certificates"`
}

// rescue is InstanceActionRescuePayload (no rescue image: Ironic's rescue
// boots its ramdisk).
type rescue struct {
	action
	RescueImageRef *string `json:"rescue_image_ref"`
}

// volumeAction is InstanceActionVolumePayload: the volume attached or
// detached.
type volumeAction struct {
	action
	VolumeID string `json:"volume_id"`
}

// update is InstanceUpdatePayload: the instance, the change of its
// states, and the name it had when the name changed.
type update struct {
	instance
	StateUpdate    Object   `json:"state_update"`
	OldDisplayName *string  `json:"old_display_name"`
	AuditPeriod    Object   `json:"audit_period"`
	Bandwidth      []any    `json:"bandwidth"`
	Tags           []string `json:"tags"`
}

// stateUpdate is InstanceStateUpdatePayload.
type stateUpdate struct {
	OldState     string  `json:"old_state"`
	State        string  `json:"state"`
	OldTaskState *string `json:"old_task_state"`
	NewTaskState *string `json:"new_task_state"`
}

// auditPeriod is AuditPeriodPayload.
type auditPeriod struct {
	Beginning string `json:"audit_period_beginning"`
	Ending    string `json:"audit_period_ending"`
}

// flavor is FlavorPayload's fields that the server's record keeps.
type flavor struct {
	FlavorID    string            `json:"flavorid"`
	Name        string            `json:"name"`
	MemoryMB    int               `json:"memory_mb"`
	VCPUs       int               `json:"vcpus"`
	RootGB      int               `json:"root_gb"`
	EphemeralGB int               `json:"ephemeral_gb"`
	Swap        int               `json:"swap"`
	RxtxFactor  float64           `json:"rxtx_factor"`
	VCPUWeight  int               `json:"vcpu_weight"`
	Disabled    bool              `json:"disabled"`
	IsPublic    bool              `json:"is_public"`
	ExtraSpecs  map[string]string `json:"extra_specs"`
	Projects    []string          `json:"projects"`
	Description *string           `json:"description"`
}

// exception is ExceptionPayload: a fault as Nova reports an exception.
type exception struct {
	ModuleName       string `json:"module_name"`
	FunctionName     string `json:"function_name"`
	Exception        string `json:"exception"`
	ExceptionMessage string `json:"exception_message"`
	Traceback        string `json:"traceback"`
}

// nullTime is a payload time, nil for the zero time.
func nullTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(payloadTimeLayout)
	return &s
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// powerNames are Nova's power_state names by code (nova.compute.power_state).
var powerNames = map[int]string{0: "pending", 1: "running", 3: "paused", 4: "shutdown", 6: "crashed", 7: "suspended"}

// payload is the instance part of a notification about s; host is the
// service host that reports it (Nova's compute host: a server holding a
// node shows it, with the node).
func payload(s *lifecycle.Server, host, flavorName string) instance {
	st := lifecycle.Nova(s)
	p := instance{
		UUID: s.ID, UserID: s.UserID, TenantID: s.ProjectID, ReservationID: s.Spec.ReservationID,
		DisplayName: s.Name, DisplayDescription: s.Spec.Description, HostName: hostName(s),
		AvailabilityZone: availabilityZoneNova, ImageUUID: s.Spec.ImageID, KeyName: nullString(s.Spec.KeyName),
		CreatedAt: nullTime(s.CreatedAt), LaunchedAt: nullTime(s.LaunchedAt), UpdatedAt: nullTime(s.UpdatedAt),
		State: st.VMState, PowerState: powerNames[lifecycle.PowerState(s)], TaskState: nullString(st.TaskState),
		IPAddresses: []any{}, BlockDevices: []any{}, Metadata: maps.Clone(s.Spec.Metadata), Locked: s.Lock.Locked,
		AutoDiskConfig: s.Spec.DiskConfig, RequestID: requestID(s), ActionInitiatorUser: s.UserID,
		ActionInitiatorProject: s.ProjectID,
		Flavor: object("FlavorPayload", versionFlavor, flavor{
			FlavorID: s.Spec.FlavorID, Name: flavorName, MemoryMB: s.Spec.RAMMB, VCPUs: s.Spec.VCPUs,
			RootGB: s.Spec.RootGB, RxtxFactor: 1, IsPublic: true, ExtraSpecs: map[string]string{},
		}),
	}
	if p.Metadata == nil {
		p.Metadata = map[string]string{}
	}
	if p.AutoDiskConfig == "" {
		p.AutoDiskConfig = defaultAutoDiskConfig
	}
	if s.NodeID != "" {
		p.Host, p.Node = nullString(host), nullString(s.NodeID)
	}
	if s.Phase == lifecycle.PhaseDeleted {
		p.TerminatedAt, p.DeletedAt = nullTime(s.PhaseSince), nullTime(s.PhaseSince)
	}
	return p
}

// hostName is the server's hostname as Nova's payload shows it.
func hostName(s *lifecycle.Server) string {
	if s.Spec.Hostname != "" {
		return s.Spec.Hostname
	}
	return strings.ToLower(s.Name)
}

// requestID is the request of the action under way.
func requestID(s *lifecycle.Server) string {
	switch {
	case s.Desired == lifecycle.DesiredDeleted:
		return s.DeleteRequestID
	case s.OpPending() || s.Op.RequestID != "" && !s.Phase.Stable():
		return s.Op.RequestID
	}
	return s.CreateRequestID
}

// fault is the fault of s as Nova's ExceptionPayload (nil: none).
func fault(s *lifecycle.Server) *Object {
	if s.Fault == nil {
		return nil
	}
	o := object("ExceptionPayload", versionException, exception{
		ModuleName: "ingot.lifecycle", FunctionName: string(s.Fault.Step), Exception: string(s.Fault.Reason),
		ExceptionMessage: s.Fault.Message, Traceback: "",
	})
	return &o
}
