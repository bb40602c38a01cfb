package servers

import "github.com/ingot-dev/ingot/internal/api/core"

// The bodies of the server routes. Members are in byte order, as the maps
// they replaced were marshalled, so each answer is the same byte for byte.

// serverBody wraps one server: a *serverView, a createdServer or the map of
// a PUT or rebuild answer (updateView).
type serverBody struct {
	Server any `json:"server"`
}

// serverList is a page of servers, with the next link on a full page.
type serverList[T any] struct {
	Servers []T         `json:"servers"`
	Links   []core.Link `json:"servers_links,omitempty"`
}

// createdServer is the create answer: Nova's few members, adminPass unless
// instance passwords are disabled.
type createdServer struct {
	DiskConfig     string              `json:"OS-DCF:diskConfig"`
	AdminPass      *string             `json:"adminPass,omitempty"`
	ID             string              `json:"id"`
	Links          []core.Link         `json:"links"`
	SecurityGroups []map[string]string `json:"security_groups"`
}

type reservationBody struct {
	ReservationID string `json:"reservation_id"`
}

// adminPassBody is the rescue answer: empty when instance passwords are
// disabled.
type adminPassBody struct {
	AdminPass *string `json:"adminPass,omitempty"`
}

type serverMetadata struct {
	Metadata map[string]string `json:"metadata"`
}

type metaItem struct {
	Meta map[string]string `json:"meta"`
}

type tagsBody struct {
	Tags []string `json:"tags"`
}

type addressesBody struct {
	Addresses map[string][]basicAddress `json:"addresses"`
}

// basicAddress is an address as the ips routes show it.
type basicAddress struct {
	Addr    string `json:"addr"`
	Version int    `json:"version"`
}

type interfacesBody struct {
	InterfaceAttachments []any `json:"interfaceAttachments"` // interfaceAttachment, taggedInterface from 2.70
}

type interfaceAttachment struct {
	FixedIPs  []fixedIP `json:"fixed_ips"`
	MACAddr   string    `json:"mac_addr"`
	NetID     string    `json:"net_id"`
	PortID    string    `json:"port_id"`
	PortState string    `json:"port_state"`
}

type fixedIP struct {
	IPAddress string `json:"ip_address"`
	SubnetID  string `json:"subnet_id"`
}

// attachedVolume is one entry of os-extended-volumes:volumes_attached.
type attachedVolume struct {
	DeleteOnTermination *bool  `json:"delete_on_termination,omitempty"` // 2.3
	ID                  string `json:"id"`
}

type volumeAttachmentBody struct {
	VolumeAttachment serverVolumeAttachment `json:"volumeAttachment"`
}

type volumeAttachmentsBody struct {
	VolumeAttachments []serverVolumeAttachment `json:"volumeAttachments"`
}

// serverVolumeAttachment is one entry of os-volume_attachments.
type serverVolumeAttachment struct {
	AttachmentID        *string `json:"attachment_id,omitempty"`         // 2.89
	BDMUUID             *string `json:"bdm_uuid,omitempty"`              // 2.89
	DeleteOnTermination *bool   `json:"delete_on_termination,omitempty"` // 2.79
	Device              *string `json:"device"`
	ID                  *string `json:"id,omitempty"` // below 2.89
	ServerID            string  `json:"serverId"`
	Tag                 any     `json:"tag,omitempty"` // null from 2.70
	VolumeID            string  `json:"volumeId"`
}

type actionsBody struct {
	InstanceActions []actionView `json:"instanceActions"`
	Links           []core.Link  `json:"links,omitempty"` // 2.58, a full page
}

type actionBody struct {
	InstanceAction actionView `json:"instanceAction"`
}

type passwordBody struct {
	Password string `json:"password"`
}

type migrationsBody struct {
	Migrations []any `json:"migrations"`
}
