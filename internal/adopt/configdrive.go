package adopt

import (
	"slices"
	"strings"

	"github.com/ingot-dev/ingot/internal/store"
)

// cdAddress is one address a config drive gives a VIF.
type cdAddress struct {
	IP, MAC, NetworkID string
}

// configDriveAddresses reads the addresses of the node's config drive
// (instance_info.configdrive in its JSON form, network_data.json as Nova
// and ingot write it: links carry the VIF id, networks the address), by
// VIF id. Empty when Ironic masks it ("******") or there is none; the
// first static IPv4 of each link wins.
func configDriveAddresses(info map[string]any) map[string]cdAddress {
	out := map[string]cdAddress{}
	cd, _ := info["configdrive"].(map[string]any)
	nd, _ := cd["network_data"].(map[string]any)
	links, _ := nd["links"].([]any)
	nets, _ := nd["networks"].([]any)
	type link struct{ vif, mac string }
	byLink := map[string]link{}
	for _, l := range links {
		lm, _ := l.(map[string]any)
		if vif, id := str(lm, "vif_id"), str(lm, "id"); vif != "" && id != "" {
			byLink[id] = link{vif: vif, mac: str(lm, "ethernet_mac_address")}
		}
	}
	for _, nw := range nets {
		nm, _ := nw.(map[string]any)
		l, ok := byLink[str(nm, "link")]
		ip := str(nm, "ip_address")
		if !ok || ip == "" || strings.Contains(ip, ":") || out[l.vif].IP != "" {
			continue
		}
		out[l.vif] = cdAddress{IP: ip, MAC: l.mac, NetworkID: str(nm, "network_id")}
	}
	return out
}

// sortPorts orders rows by network, then id: a stable record and report.
func sortPorts(ps []store.Port) {
	slices.SortFunc(ps, func(a, b store.Port) int {
		if c := strings.Compare(a.NetworkID, b.NetworkID); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
