// Package ironic is ingot's adapter over the Ironic API (gophercloud v2). It
// turns HTTP outcomes into the typed errors below; nothing above this package
// sees gophercloud types or HTTP status codes.
package ironic

import (
	"errors"
	"time"
)

// Typed errors. Every error returned by this package wraps exactly one of
// them (checked with errors.Is), plus the original message for logs.
var (
	// ErrNotFound: the node (or VIF, port, target) does not exist (404).
	ErrNotFound = errors.New("ironic: not found")
	// ErrNodeAssociated: the node is associated with another instance (409).
	ErrNodeAssociated = errors.New("ironic: node associated with another instance")
	// ErrInstanceAssociated: our instance is already associated with another node (409).
	ErrInstanceAssociated = errors.New("ironic: instance already associated with another node")
	// ErrNodeLocked: the node is locked by a conductor, or a state transition
	// is in progress (409). Transient.
	ErrNodeLocked = errors.New("ironic: node locked")
	// ErrUnavailable: connection refused/reset, timeout, 5xx, 503
	// NoFreeConductorWorker, "concurrent action limit" 500. Transient.
	ErrUnavailable = errors.New("ironic: unavailable")
	// ErrInvalidState: the action is not allowed in the node's current
	// provision/power state (400 "can not be performed ... while it is in state").
	ErrInvalidState = errors.New("ironic: invalid state for action")
	// ErrInvalid: any other rejected request (400, 406, other 4xx). Permanent.
	ErrInvalid = errors.New("ironic: invalid request")
)

// IsTransient reports whether retrying the same call later may succeed.
func IsTransient(err error) bool {
	return errors.Is(err, ErrNodeLocked) || errors.Is(err, ErrUnavailable)
}

// Node is the part of an Ironic node ingot observes. Null strings are "".
type Node struct {
	UUID                 string
	Name                 string
	InstanceUUID         string
	ProvisionState       string
	TargetProvisionState string
	PowerState           string
	TargetPowerState     string
	Maintenance          bool
	MaintenanceReason    string
	LastError            string
	Reservation          string // conductor holding the lock, "" if unlocked
	ResourceClass        string
	Traits               []string
	ProvisionUpdatedAt   time.Time
	// Capabilities are properties.capabilities ("boot_mode:uefi,…"), read
	// with the inventory only (ListAvailable, ListNodes); nil otherwise.
	Capabilities map[string]string
}

// Ironic provision states (2023.1), as the API spells them.
const (
	StateEnroll        = "enroll"
	StateManageable    = "manageable"
	StateAvailable     = "available"
	StateDeploying     = "deploying"
	StateWaitCallback  = "wait call-back"
	StateActive        = "active"
	StateDeployFailed  = "deploy failed"
	StateDeleting      = "deleting"
	StateCleaning      = "cleaning"
	StateCleanWait     = "clean wait"
	StateCleanFailed   = "clean failed"
	StateError         = "error"
	StateVerifying     = "verifying"
	StateInspecting    = "inspecting"
	StateRescue        = "rescue"
	StateAdoptFailed   = "adopt failed"
	StateDeployHold    = "deploy hold"
	StateUnrescuing    = "unrescuing"
	StateRescueWait    = "rescue wait"
	StateRescueFailed  = "rescue failed"
	StateRescuing      = "rescuing"
	StateServiceFailed = "service failed"
	StateInspectWait   = "inspect wait"
	StateInspectFailed = "inspect failed"
	StateAdopting      = "adopting"
	StateCleanHold     = "clean hold"
	StateServicing     = "servicing"
	StateServiceWait   = "service wait"
	StateUnrescueFail  = "unrescue failed"
)

// DeployRequest is what a deploy sends: instance_info (merged into the node's,
// only changed keys patched) and a JSON config drive.
type DeployRequest struct {
	InstanceInfo map[string]any
	// InstanceInfoSet: the node has InstanceInfo already (the reservation
	// wrote it), so no PATCH goes before the provision PUT.
	InstanceInfoSet bool
	ConfigDrive     *ConfigDrive
	// ConfigDriveImage, when set, is sent instead of ConfigDrive: a
	// gzipped, base64 ISO 9660 config drive (what Nova's Ironic driver
	// sends), for what the JSON form cannot carry (injected files).
	ConfigDriveImage string
}

// ConfigDrive is the JSON form of a config drive (microversion >= 1.56).
type ConfigDrive struct {
	MetaData    map[string]any `json:"meta_data,omitempty"`
	NetworkData map[string]any `json:"network_data,omitempty"`
	UserData    string         `json:"user_data,omitempty"`
}
