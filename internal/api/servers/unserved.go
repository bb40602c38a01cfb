package servers

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
)

// notSupported is Nova's raise_feature_not_supported: its 501.
func notSupported(msg string) error {
	if msg == "" {
		msg = "The requested functionality is not supported."
	}
	return &core.APIError{Status: http.StatusNotImplemented, Message: msg}
}

// unservedActions are Nova's server actions that ingot does not serve, with
// what Nova in front of Ironic answers. The driver lacks the operation: a
// 501 where Nova's API turns the driver's NotImplementedError into one
// (pause, console output, password); a 400 for the consoles, which Nova
// refuses when the console type is not enabled; a 409 for what needs a
// hypervisor (resize, migrate, shelve, snapshot, …), which Nova accepts
// only to fail on the compute host.
var unservedActions = withHypervisorActions(map[string]func(id string, raw json.RawMessage) error{
	"pause":               notImplementedAction,
	"unpause":             notImplementedAction,
	"suspend":             notImplementedAction,
	"resume":              notImplementedAction,
	"os-getConsoleOutput": notImplementedAction,
	"changePassword": func(string, json.RawMessage) error {
		return notSupported("Unable to set password on instance")
	},
	"os-getVNCConsole":    consoleAction,
	"os-getSPICEConsole":  consoleAction,
	"os-getRDPConsole":    consoleAction,
	"os-getSerialConsole": consoleAction,
})

// hypervisorActions are answered with unservedConflict.
var hypervisorActions = []string{"resize", "confirmResize", "revertResize", "migrate", "os-migrateLive",
	"evacuate", "shelve", "shelveOffload", "unshelve", "createImage", "createBackup", "trigger_crash_dump",
	"addSecurityGroup", "removeSecurityGroup", "addFloatingIp", "removeFloatingIp", "addFixedIp",
	"removeFixedIp", "injectNetworkInfo", "resetNetwork"}

func withHypervisorActions(m map[string]func(string, json.RawMessage) error) map[string]func(string, json.RawMessage) error {
	for _, a := range hypervisorActions {
		m[a] = func(id string, _ json.RawMessage) error {
			return core.Conflict("Cannot '%s' instance %s: a bare-metal server does not support it.", a, id)
		}
	}
	return m
}

func notImplementedAction(string, json.RawMessage) error { return notSupported("") }

// consoleAction is Nova's ConsoleTypeUnavailable for the legacy console
// actions: the type asked for is not enabled.
func consoleAction(_ string, raw json.RawMessage) error {
	var body struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &body) != nil || body.Type == "" {
		return core.BadRequest("Invalid input for field/attribute type: 'type' is a required property.")
	}
	return core.BadRequest("Unavailable console type %s.", body.Type)
}

// unservedAction answers an action ingot does not serve: Nova's answer for
// its own actions, and its 400 for a name it does not know.
func (s *Service) unservedAction(r *core.Request, name string, raw json.RawMessage) error {
	answer, known := unservedActions[name]
	if !known {
		return core.BadRequest("There is no such action: %s", name)
	}
	// As Nova, a server that is not there (or not the caller's) is a 404
	// whatever the action.
	sv, err := s.visibleServer(r, r.PathValue("id"), policy.ServersShow)
	if err != nil {
		return err
	}
	return answer(sv.ID, raw)
}

// remoteConsoleProtocols are the console protocols of Nova's schema, with
// their types.
var remoteConsoleProtocols = map[string][]string{
	"vnc": {"novnc", "xvpvnc"}, "spice": {"spice-html5"}, "rdp": {"rdp-html5"},
	"serial": {"serial"}, "mks": {"webmks"},
}

// createRemoteConsole answers POST /servers/{id}/remote-consoles (2.6) as
// Nova with no console enabled: 400 Unavailable console type.
func (s *Service) createRemoteConsole(w http.ResponseWriter, r *core.Request) error {
	if !r.MV.AtLeast(mvRemoteConsoles) {
		return core.NotFound("The resource could not be found.")
	}
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	var body struct {
		Protocol string `json:"protocol"`
		Type     string `json:"type"`
	}
	raw, ok := top["remote_console"]
	if !ok || json.Unmarshal(raw, &body) != nil {
		return core.BadRequest("Invalid input for field/attribute remote_console: 'remote_console' is a required property.")
	}
	types, ok := remoteConsoleProtocols[body.Protocol]
	if !ok {
		return core.BadRequest("Invalid input for field/attribute protocol. Value: %s. It is not one of %v.", body.Protocol, []string{"vnc", "spice", "rdp", "serial", "mks"})
	}
	if !slices.Contains(types, body.Type) {
		return core.BadRequest("Invalid input for field/attribute type. Value: %s. It is not one of the types of %s.", body.Type, body.Protocol)
	}
	if _, err := s.visibleServer(r, r.PathValue("id"), policy.ServersShow); err != nil {
		return err
	}
	if body.Protocol == "rdp" {
		return core.BadRequest("Unavailable console type %s.", body.Protocol)
	}
	return core.BadRequest("Unavailable console type %s.", body.Type)
}
