package config

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/network"
)

// traitRE is the form of an os-traits name (standard or CUSTOM_).
var traitRE = regexp.MustCompile(`^[A-Z0-9_]{1,255}$`)

// capabilityOps are the prefixes of Nova's extra-spec operators ("<in> a",
// "s== b", ">= 2"); ingot matches capabilities exactly and refuses them
// rather than compare the operator as text.
var capabilityOps = []string{"<in>", "<all-in>", "<or>", "=", "!=", ">=", "<=", "s==", "s!=", "s>=", "s<=", "s>", "s<"}

// checkFlavorSpecs validates a flavor's traits and extra_specs.
func checkFlavorSpecs(key string, f *Flavor, bad func(key, format string, args ...any)) {
	for i, t := range f.Traits {
		if !traitRE.MatchString(t) {
			bad(fmt.Sprintf("%s.traits[%d]", key, i), "want a trait name such as CUSTOM_GPU or HW_CPU_X86_AVX2 (A-Z, 0-9, _), got %q", t)
		}
	}
	for _, k := range sortedKeys(f.ExtraSpecs) {
		v := f.ExtraSpecs[k]
		sk := key + ".extra_specs." + k
		ns, name, ok := strings.Cut(k, ":")
		switch {
		case !ok || name == "":
			bad(sk, "want trait:<NAME> or capabilities:<key>")
		case ns == "trait":
			if !traitRE.MatchString(name) {
				bad(sk, "want a trait name such as CUSTOM_GPU (A-Z, 0-9, _), got %q", name)
			}
			switch v {
			case "required":
			case "forbidden":
				if slices.Contains(f.Traits, name) {
					bad(sk, "trait %s is both in traits (required) and forbidden", name)
				}
			default:
				bad(sk, "want required or forbidden, got %q", v)
			}
		case ns == "capabilities":
			if strings.ContainsAny(name, ":,") || hasSpaceOrControl(name) {
				bad(sk, "a capability name must not contain ':', ',' or spaces")
			}
			if v == "" || strings.Contains(v, ",") || hasSpaceOrControl(v) {
				bad(sk, "want a plain value such as uefi (no spaces or commas), got %q", v)
				continue
			}
			for _, op := range capabilityOps {
				if strings.HasPrefix(v, op) {
					bad(sk, "operators such as %q are not supported: capabilities match exactly", op)
					break
				}
			}
		case ns == "resources":
			bad(sk, "resources come from resource_class (a server takes one whole node)")
		default:
			bad(sk, "ingot schedules on trait:<NAME> and capabilities:<key> extra specs only")
		}
	}
}

func hasSpaceOrControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0
}

// checkNetworkExtras validates mtu, dns_nameservers, routes and
// physical_network of a network whose cidr p parsed.
func checkNetworkExtras(key string, n *Network, p netip.Prefix, bad func(key, format string, args ...any)) {
	if n.MTU != 0 && (n.MTU < 68 || n.MTU > 65535) {
		bad(key+".mtu", "want 68 to 65535 (or leave it out), got %d", n.MTU)
	}
	seen := map[netip.Addr]bool{}
	for i, d := range n.DNSNameservers {
		a, err := netip.ParseAddr(d)
		if err != nil || a.Zone() != "" {
			bad(fmt.Sprintf("%s.dns_nameservers[%d]", key, i), "want an IP address, got %q", d)
			continue
		}
		if seen[a] {
			bad(fmt.Sprintf("%s.dns_nameservers[%d]", key, i), "%s is listed twice", a)
		}
		seen[a] = true
	}
	dests := map[netip.Prefix]bool{}
	for i, r := range n.Routes {
		rk := fmt.Sprintf("%s.routes[%d]", key, i)
		d, err := netip.ParsePrefix(r.Destination)
		switch {
		case err != nil || !d.Addr().Is4():
			bad(rk+".destination", "want an IPv4 CIDR such as 192.168.0.0/16, got %q", r.Destination)
		case d != d.Masked():
			bad(rk+".destination", "want the network address %s, got %q", d.Masked(), r.Destination)
		case d.Bits() == 0:
			bad(rk+".destination", "the default route goes through the network's gateway key")
		case dests[d]:
			bad(rk+".destination", "%s is routed twice", d)
		}
		dests[d] = true
		gw, err := netip.ParseAddr(r.Gateway)
		if err != nil || !p.Masked().Contains(gw) {
			bad(rk+".gateway", "want an address inside %s (the next hop must be on the network), got %q", n.CIDR, r.Gateway)
		}
	}
	if len(n.PhysicalNetwork) > 64 || hasSpaceOrControl(n.PhysicalNetwork) {
		bad(key+".physical_network", "want an Ironic physical network name (at most 64 characters, no spaces), got %q", n.PhysicalNetwork)
	}
}

// catalogFlavor resolves a configured flavor for the API and the scheduler:
// required traits from traits and extra_specs together.
func catalogFlavor(f Flavor) catalog.Flavor {
	cf := catalog.Flavor{ID: f.ID, Name: f.Name, ResourceClass: f.ResourceClass,
		VCPUs: f.VCPUs, RAMMB: f.RAMMB, DiskGB: f.DiskGB, Description: f.Description}
	required := append([]string(nil), f.Traits...)
	for k, v := range f.ExtraSpecs {
		ns, name, _ := strings.Cut(k, ":")
		switch {
		case ns == "trait" && v == "required":
			required = append(required, name)
		case ns == "trait" && v == "forbidden":
			cf.ForbiddenTraits = append(cf.ForbiddenTraits, name)
		case ns == "capabilities":
			if cf.Capabilities == nil {
				cf.Capabilities = map[string]string{}
			}
			cf.Capabilities[name] = v
		}
	}
	sort.Strings(required)
	cf.Traits = slices.Compact(required)
	sort.Strings(cf.ForbiddenTraits)
	return cf
}

// addNetworkExtras copies the validated extra keys into the IPAM's network.
func addNetworkExtras(nw *network.Network, n Network) {
	for _, d := range n.DNSNameservers {
		if a, err := netip.ParseAddr(d); err == nil {
			nw.DNS = append(nw.DNS, a)
		}
	}
	for _, r := range n.Routes {
		d, err1 := netip.ParsePrefix(r.Destination)
		gw, err2 := netip.ParseAddr(r.Gateway)
		if err1 == nil && err2 == nil {
			nw.Routes = append(nw.Routes, network.Route{Destination: d, Gateway: gw})
		}
	}
	nw.PhysicalNetwork = n.PhysicalNetwork
	nw.DHCP = n.DHCP
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
