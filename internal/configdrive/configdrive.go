// Package configdrive builds what a deploy sends Ironic: instance_info and
// the JSON config drive (meta_data.json, network_data.json, user_data) in
// the forms Nova writes them, which is what cloud-init on the machine reads.
// Pure: the caller supplies the randomness.
package configdrive

import (
	"encoding/base64"
	"net/netip"
	"strconv"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/store"
)

// AvailabilityZone is the one zone ingot reports (as the compute API does).
const AvailabilityZone = "nova"

// RandomSeedBytes is how much randomness meta_data.json's random_seed
// carries (Nova: 512 bytes).
const RandomSeedBytes = 512

// Input is everything a deploy request is made of.
type Input struct {
	Server   *lifecycle.Server
	Ports    []store.Port // the server's ports, bound on its node
	Networks network.Networks
	// RandomSeed becomes meta_data.json's random_seed (RandomSeedBytes
	// from crypto/rand; nil leaves it out).
	RandomSeed []byte
}

// Build returns instance_info and the config drive for the server's deploy.
func Build(in Input) ironic.DeployRequest {
	s := in.Server
	cd := &ironic.ConfigDrive{MetaData: MetaData(s, in.RandomSeed), NetworkData: NetworkData(in.Ports, in.Networks)}
	if s.Spec.UserData != "" {
		if raw, err := base64.StdEncoding.DecodeString(s.Spec.UserData); err == nil {
			cd.UserData = string(raw)
		} else {
			cd.UserData = s.Spec.UserData
		}
	}
	return ironic.DeployRequest{InstanceInfo: InstanceInfo(s), ConfigDrive: cd}
}

// OptionalInstanceInfo is the keys InstanceInfo sets only for some specs
// (a rebuild removes those its new spec lacks).
func OptionalInstanceInfo() []string { return []string{"image_checksum", "traits", "capabilities"} }

// InstanceInfo is what the deploy patches into the node's instance_info:
// the image, the root size, and the flavor's required traits and
// capabilities, so that Ironic applies its deploy templates and boot mode.
func InstanceInfo(s *lifecycle.Server) map[string]any {
	info := map[string]any{
		"image_source": s.Spec.ImageSource,
		"root_gb":      s.Spec.RootGB,
		"display_name": s.Name,
	}
	if s.Spec.ImageChecksum != "" {
		info["image_checksum"] = s.Spec.ImageChecksum
	}
	if len(s.Spec.RequiredTraits) > 0 {
		traits := make([]any, len(s.Spec.RequiredTraits))
		for i, t := range s.Spec.RequiredTraits {
			traits[i] = t
		}
		info["traits"] = traits
	}
	if len(s.Spec.Capabilities) > 0 {
		caps := make(map[string]any, len(s.Spec.Capabilities))
		for k, v := range s.Spec.Capabilities {
			caps[k] = v
		}
		info["capabilities"] = caps
	}
	return info
}

// MetaData is meta_data.json as Nova's metadata service writes it
// (nova/api/metadata/base.py: _metadata_as_json).
func MetaData(s *lifecycle.Server, seed []byte) map[string]any {
	hostname := s.Spec.Hostname
	if hostname == "" {
		hostname = DefaultHostname(s.Name, s.ID)
	}
	meta := map[string]any{
		"uuid": s.ID, "name": s.Name, "hostname": hostname, "launch_index": s.Spec.LaunchIndex,
		"availability_zone": AvailabilityZone, "project_id": s.ProjectID, "devices": []any{},
	}
	if s.Spec.AdminPass != "" {
		// Nova's Ironic driver passes the admin password as extra metadata,
		// which meta_data.json carries as admin_pass (cloud-init sets it).
		meta["admin_pass"] = s.Spec.AdminPass
	}
	if len(s.Spec.Metadata) > 0 {
		md := make(map[string]any, len(s.Spec.Metadata))
		for k, v := range s.Spec.Metadata {
			md[k] = v
		}
		meta["meta"] = md
	}
	if s.Spec.PublicKey != "" {
		name := s.Spec.KeyName
		meta["public_keys"] = map[string]any{name: s.Spec.PublicKey}
		typ := s.Spec.KeyType
		if typ == "" {
			typ = "ssh"
		}
		meta["keys"] = []any{map[string]any{"name": name, "type": typ, "data": s.Spec.PublicKey}}
	}
	if len(s.Spec.Files) > 0 {
		meta["files"] = fileEntries(s.Spec.Files)
	}
	if seed != nil {
		meta["random_seed"] = base64.StdEncoding.EncodeToString(seed)
	}
	return meta
}

// NetworkData is network_data.json for the ports (Nova's
// nova/virt/netutils.py get_network_metadata, with the Ironic driver's
// bonds): one link per port — type phy with the NIC's MAC, or bond over the
// portgroup's ports, which follow as links of their own — and the
// network's MTU; one network per port, ipv4 with address, netmask, the
// default route via the gateway and the extra routes (or ipv4_dhcp); the
// DNS servers as services.
func NetworkData(ports []store.Port, nets network.Networks) map[string]any {
	links := []any{}
	members := []any{}
	networks := []any{}
	services := []any{}
	seenDNS := map[netip.Addr]bool{}
	for i, p := range ports {
		n, known := nets.Lookup(p.NetworkID)
		if known {
			n = network.Defaults(n)
		}
		linkID := "port-" + p.ID
		link := map[string]any{"id": linkID, "vif_id": p.VIF(), "type": "phy", "ethernet_mac_address": p.MAC}
		if n.MTU > 0 {
			link["mtu"] = n.MTU
		}
		if b := p.Binding; b.Bond() {
			link["type"] = "bond"
			link["bond_mode"] = b.BondMode
			for k, v := range b.BondProperties {
				if len(k) < 4 || k[:4] != "bond" {
					k = "bond_" + k
				}
				link[k] = v
			}
			var ids []any
			for _, m := range b.Members {
				ids = append(ids, m.PortUUID)
				ml := map[string]any{"id": m.PortUUID, "type": "phy", "ethernet_mac_address": m.MAC}
				if n.MTU > 0 {
					ml["mtu"] = n.MTU
				}
				members = append(members, ml)
			}
			link["bond_links"] = ids
		}
		links = append(links, link)

		netID := "network" + strconv.Itoa(i)
		if known && n.DHCP {
			networks = append(networks, map[string]any{"id": netID, "type": "ipv4_dhcp", "link": linkID, "network_id": p.NetworkID})
		} else {
			networks = append(networks, ipv4Network(netID, linkID, p, n, known))
		}
		for _, d := range n.DNS {
			if !seenDNS[d] {
				seenDNS[d] = true
				services = append(services, map[string]any{"type": "dns", "address": d.String()})
			}
		}
	}
	return map[string]any{"links": append(links, members...), "networks": networks, "services": services}
}

func ipv4Network(id, link string, p store.Port, n network.Network, known bool) map[string]any {
	out := map[string]any{"id": id, "type": "ipv4", "link": link, "ip_address": p.IP, "network_id": p.NetworkID}
	if !known {
		return out // a network no longer configured: the address alone
	}
	out["netmask"] = netmask(n.CIDR.Bits())
	routes := []any{}
	if n.Gateway.IsValid() {
		routes = append(routes, map[string]any{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": n.Gateway.String()})
	}
	for _, r := range n.Routes {
		routes = append(routes, map[string]any{"network": r.Destination.Addr().String(),
			"netmask": netmask(r.Destination.Bits()), "gateway": r.Gateway.String()})
	}
	out["routes"] = routes
	services := []any{}
	for _, d := range n.DNS {
		services = append(services, map[string]any{"type": "dns", "address": d.String()})
	}
	out["services"] = services
	return out
}

// netmask is the dotted IPv4 mask of a prefix length.
func netmask(bits int) string {
	m := ^uint32(0) << (32 - bits)
	if bits == 0 {
		m = 0
	}
	return netip.AddrFrom4([4]byte{byte(m >> 24), byte(m >> 16), byte(m >> 8), byte(m)}).String()
}
