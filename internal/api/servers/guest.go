package servers

import (
	"maps"
	"slices"

	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/configdrive"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// resolveGuest fills what the machine and the scheduler need from the
// flavor and the name, at create as Nova does: the flavor's traits and
// capabilities, and the hostname (the requested one, else Nova's
// sanitized name, else "Server-<uuid>").
func resolveGuest(sv *lifecycle.Server, f catalog.Flavor) {
	sv.Spec.RequiredTraits = slices.Clone(f.Traits)
	sv.Spec.ForbiddenTraits = slices.Clone(f.ForbiddenTraits)
	sv.Spec.Capabilities = maps.Clone(f.Capabilities)
	if sv.Spec.Hostname == "" {
		sv.Spec.Hostname = configdrive.DefaultHostname(sv.Name, sv.ID)
	}
}

// hostnameOf is the hostname the node's config drive gets (servers
// recorded before the hostname was resolved at create have none stored).
func hostnameOf(sv *lifecycle.Server) string {
	if sv.Spec.Hostname != "" {
		return sv.Spec.Hostname
	}
	return configdrive.DefaultHostname(sv.Name, sv.ID)
}
