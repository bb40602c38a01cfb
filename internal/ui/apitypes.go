package ui

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
)

// The parts of the API's bodies the console shows. They are decoded from
// what the API answered this user, so a member the API shows less to is
// shown less here too (no hypervisor_hostname, no event host or details).

type apiServer struct {
	ID         string                  `json:"id"`
	Name       string                  `json:"name"`
	Status     string                  `json:"status"`
	TenantID   string                  `json:"tenant_id"`
	UserID     string                  `json:"user_id"`
	HostID     string                  `json:"hostId"`
	Created    string                  `json:"created"`
	Updated    string                  `json:"updated"`
	Addresses  map[string][]apiAddress `json:"addresses"`
	Flavor     json.RawMessage         `json:"flavor"`
	Image      json.RawMessage         `json:"image"`
	KeyName    *string                 `json:"key_name"`
	Metadata   map[string]string       `json:"metadata"`
	AZ         string                  `json:"OS-EXT-AZ:availability_zone"`
	TaskState  *string                 `json:"OS-EXT-STS:task_state"`
	VMState    string                  `json:"OS-EXT-STS:vm_state"`
	PowerState int                     `json:"OS-EXT-STS:power_state"`
	LaunchedAt *string                 `json:"OS-SRV-USG:launched_at"`
	Node       *string                 `json:"OS-EXT-SRV-ATTR:hypervisor_hostname"`
	Volumes    []struct {
		ID                  string `json:"id"`
		DeleteOnTermination bool   `json:"delete_on_termination"`
	} `json:"os-extended-volumes:volumes_attached"`
	Fault *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Details string `json:"details"`
		Created string `json:"created"`
	} `json:"fault"`
	Locked *bool `json:"locked"`
	// ingot's own members (today in every server body; once the API moves
	// them behind an opt-in, apiClient asks for them).
	Phase    string       `json:"ingot:phase"`
	IFault   *apiFault    `json:"ingot:fault"`
	Attempts []apiAttempt `json:"ingot:attempts"`
}

type apiAddress struct {
	Addr    string `json:"addr"`
	Version int    `json:"version"`
	MAC     string `json:"OS-EXT-IPS-MAC:mac_addr"`
}

type apiFault struct {
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Node    string    `json:"node"`
	Step    string    `json:"step"`
	At      time.Time `json:"at"`
}

type apiAttempt struct {
	Node    string    `json:"node"`
	Step    string    `json:"step"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// PowerName is Nova's name for the server's power state.
func (s *apiServer) PowerName() string {
	switch s.PowerState {
	case 0:
		return "NOSTATE"
	case 1:
		return "RUNNING"
	case 3:
		return "PAUSED"
	case 4:
		return "SHUTDOWN"
	case 6:
		return "CRASHED"
	case 7:
		return "SUSPENDED"
	}
	return fmt.Sprintf("unknown (%d)", s.PowerState)
}

// FlavorName is the embedded flavor's name (2.47+), else its id.
func (s *apiServer) FlavorName() string {
	var f struct {
		OriginalName string `json:"original_name"`
		ID           string `json:"id"`
	}
	if json.Unmarshal(s.Flavor, &f) == nil {
		if f.OriginalName != "" {
			return f.OriginalName
		}
		return f.ID
	}
	return ""
}

// ImageID is the image's id ("" when booted from a volume).
func (s *apiServer) ImageID() string {
	var im struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(s.Image, &im) == nil {
		return im.ID
	}
	return ""
}

// Task is the task_state, "" when none.
func (s *apiServer) Task() string {
	if s.TaskState == nil {
		return ""
	}
	return *s.TaskState
}

// NodeName is the node as the API shows it to this user ("" when hidden or none).
func (s *apiServer) NodeName() string {
	if s.Node == nil {
		return ""
	}
	return *s.Node
}

// IPs lists "network: address" pairs, sorted by network.
func (s *apiServer) IPs() []string {
	var out []string
	for net, as := range s.Addresses {
		for _, a := range as {
			out = append(out, net+": "+a.Addr)
		}
	}
	sort.Strings(out)
	return out
}

// Reason is the fault's reason code, or the last failed attempt's.
func (s *apiServer) Reason() string {
	if s.IFault != nil {
		return s.IFault.Reason
	}
	if n := len(s.Attempts); n > 0 && s.Status == "ERROR" {
		return s.Attempts[n-1].Reason
	}
	return ""
}

type serverList struct {
	Servers []apiServer `json:"servers"`
	Links   []struct {
		Rel  string `json:"rel"`
		Href string `json:"href"`
	} `json:"servers_links"`
}

// nextMarker is the marker of the API's next link ("" when none).
func (l *serverList) nextMarker() string {
	for _, ln := range l.Links {
		if ln.Rel != "next" {
			continue
		}
		if u, err := url.Parse(ln.Href); err == nil {
			return u.Query().Get("marker")
		}
	}
	return ""
}

type apiAction struct {
	Action    string     `json:"action"`
	RequestID string     `json:"request_id"`
	StartTime string     `json:"start_time"`
	Message   *string    `json:"message"`
	UserID    string     `json:"user_id"`
	Events    []apiEvent `json:"events"`
}

type apiEvent struct {
	Event      string  `json:"event"`
	StartTime  *string `json:"start_time"`
	FinishTime *string `json:"finish_time"`
	Result     *string `json:"result"`
	Host       *string `json:"host"`
	HostID     string  `json:"hostId"`
	Details    *string `json:"details"`
}

type apiNode struct {
	UUID                 string   `json:"uuid"`
	Name                 string   `json:"name"`
	ProvisionState       string   `json:"provision_state"`
	TargetProvisionState *string  `json:"target_provision_state"`
	PowerState           *string  `json:"power_state"`
	Maintenance          bool     `json:"maintenance"`
	MaintenanceReason    *string  `json:"maintenance_reason"`
	InstanceUUID         *string  `json:"instance_uuid"`
	ResourceClass        string   `json:"resource_class"`
	LastError            *string  `json:"last_error"`
	ServerID             *string  `json:"server_id"`
	Traits               []string `json:"traits"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// apiTime parses the API's times: created/updated (RFC 3339) and the
// actions' microsecond times without a zone (UTC).
func apiTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000000", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
