package cloudinittest

import (
	"encoding/base64"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"testing"
)

// Want is what a machine booted from a config drive must end up with.
type Want struct {
	UUID, Name, Hostname, ProjectID string
	// KeyName and Key: meta_data.json's public_keys and keys ("" = none).
	KeyName, Key string
	// Links: one per server port, in order.
	Links []Link
	// Nameservers cloud-init configures, in order.
	Nameservers []string
}

// Link is one server port as the machine must see it.
type Link struct {
	// NICs carry the port: one interface name, or a bond's members.
	NICs     []string
	BondMode string
	Address  netip.Prefix // address and prefix length (zero with DHCP)
	Gateway  string       // the default route's next hop ("" = none)
	Routes   []string     // more routes, "network/bits via gateway"
	MTU      int
	DHCP     bool
}

// CheckConfigDrive parses the config drive's network_data with cloud-init
// (nics: MAC → interface name, the machine's NICs) and fails t unless the
// machine gets want; it returns cloud-init's network config.
func CheckConfigDrive(t testing.TB, cd map[string]any, nics map[string]string, want Want) *Config {
	t.Helper()
	if cd == nil {
		t.Fatal("no config drive")
	}
	md, _ := cd["meta_data"].(map[string]any)
	checkMetaData(t, md, want)
	cfg, err := Convert(t, cd["network_data"], nics)
	if err != nil {
		t.Fatalf("cloud-init cannot read network_data.json: %v\nnetwork_data: %v", err, cd["network_data"])
	}
	for i, l := range want.Links {
		checkLink(t, cfg, i, l)
	}
	if got := cfg.Nameservers(); !slices.Equal(got, want.Nameservers) {
		t.Errorf("nameservers %v, want %v", got, want.Nameservers)
	}
	return cfg
}

func checkMetaData(t testing.TB, md map[string]any, want Want) {
	t.Helper()
	for k, v := range map[string]any{"uuid": want.UUID, "name": want.Name, "hostname": want.Hostname,
		"project_id": want.ProjectID, "availability_zone": "nova", "launch_index": float64(0)} {
		if md[k] != v {
			t.Errorf("meta_data.json %s = %v, want %v", k, md[k], v)
		}
	}
	if d, ok := md["devices"].([]any); !ok || len(d) != 0 {
		t.Errorf("meta_data.json devices = %v, want []", md["devices"])
	}
	if seed, _ := md["random_seed"].(string); seed == "" {
		t.Errorf("meta_data.json has no random_seed")
	} else if raw, err := base64.StdEncoding.DecodeString(seed); err != nil || len(raw) != 512 {
		t.Errorf("random_seed: %d bytes, %v", len(raw), err)
	}
	if want.Key == "" {
		return
	}
	if pk, _ := md["public_keys"].(map[string]any); pk[want.KeyName] != want.Key {
		t.Errorf("meta_data.json public_keys = %v, want %s: %s", md["public_keys"], want.KeyName, want.Key)
	}
	wantKeys := []any{map[string]any{"name": want.KeyName, "type": "ssh", "data": want.Key}}
	if !reflect.DeepEqual(md["keys"], wantKeys) {
		t.Errorf("meta_data.json keys = %v, want %v", md["keys"], wantKeys)
	}
}

func checkLink(t testing.TB, cfg *Config, i int, l Link) {
	t.Helper()
	var e map[string]any
	if len(l.NICs) == 1 {
		e = cfg.Named(l.NICs[0])
		if e == nil || e["type"] != "physical" {
			t.Errorf("link %d: no physical interface %s in %s", i, l.NICs[0], cfg)
			return
		}
	} else {
		for _, c := range cfg.Config {
			if c["type"] == "bond" && reflect.DeepEqual(c["bond_interfaces"], toAny(l.NICs)) {
				e = c
			}
		}
		if e == nil {
			t.Errorf("link %d: no bond of %v in %s", i, l.NICs, cfg)
			return
		}
		if p, _ := e["params"].(map[string]any); p["bond_mode"] != l.BondMode {
			t.Errorf("link %d: bond params %v, want bond_mode %s", i, e["params"], l.BondMode)
		}
	}
	if got := mtuOf(e); got != l.MTU {
		t.Errorf("link %d (%v): mtu %v, want %d", i, e["name"], e["mtu"], l.MTU)
	}
	subnets, _ := e["subnets"].([]any)
	if len(subnets) != 1 {
		t.Errorf("link %d (%v): subnets %v, want one", i, e["name"], e["subnets"])
		return
	}
	sn, _ := subnets[0].(map[string]any)
	if l.DHCP {
		if sn["type"] != "dhcp4" {
			t.Errorf("link %d: subnet %v, want dhcp4", i, sn)
		}
		return
	}
	addr, _ := sn["address"].(string)
	mask, _ := sn["netmask"].(string)
	if sn["type"] != "static" || fmt.Sprintf("%s/%d", addr, maskBits(mask)) != l.Address.String() {
		t.Errorf("link %d: subnet %v, want static %s", i, sn, l.Address)
	}
	var routes []string
	rs, _ := sn["routes"].([]any)
	for _, r := range rs {
		m, _ := r.(map[string]any)
		routes = append(routes, fmt.Sprintf("%v/%d via %v", m["network"], maskBits(fmt.Sprint(m["netmask"])), m["gateway"]))
	}
	var wantRoutes []string
	if l.Gateway != "" {
		wantRoutes = append(wantRoutes, "0.0.0.0/0 via "+l.Gateway)
	}
	wantRoutes = append(wantRoutes, l.Routes...)
	if !slices.Equal(routes, wantRoutes) {
		t.Errorf("link %d: routes %v, want %v", i, routes, wantRoutes)
	}
}

func mtuOf(e map[string]any) int {
	if f, ok := e["mtu"].(float64); ok {
		return int(f)
	}
	return 0
}

// maskBits is the prefix length of a dotted netmask (-1 when malformed).
func maskBits(mask string) int {
	a, err := netip.ParseAddr(mask)
	if err != nil || !a.Is4() {
		return -1
	}
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n := 0
	for v&(1<<31) != 0 {
		n++
		v <<= 1
	}
	if v != 0 {
		return -1
	}
	return n
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
