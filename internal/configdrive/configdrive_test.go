package configdrive

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/store"
)

// The expected values are what Nova's sanitize_hostname (nova/utils.py)
// returns for the same input under Python 3.
func TestSanitizeHostname(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Web Server 01", "web-server-01"},
		{"my_host.example.com", "my-host-example-com"},
		{"Café", "café"},
		{"日本語", ""},
		{"--a--", "a"},
		{"a!@#b", "ab"},
		{strings.Repeat("a", 70), strings.Repeat("a", 63)},
		{strings.Repeat("x", 62) + "!yy", strings.Repeat("x", 62)}, // truncated before the clean-up
		{"ÀB", "àb"},
		{"a\tb", "ab"},
		{"Ünïcödé ½ ² µ ª", "ünïcödé-½-²-µ-ª"},
		{"web01.Example.COM.", "web01-example-com"},
		{"ÿ-ß", "ÿ-ß"},
		{"..", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := SanitizeHostname(tt.in); got != tt.want {
			t.Errorf("SanitizeHostname(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := DefaultHostname("日本語", "0f6f0c2c-0000-4000-8000-000000000001"); got != "Server-0f6f0c2c-0000-4000-8000-000000000001" {
		t.Errorf("DefaultHostname of an unusable name = %q", got)
	}
	if got := DefaultHostname("Web 1", "x"); got != "web-1" {
		t.Errorf("DefaultHostname = %q", got)
	}
}

var (
	netA = network.Network{ID: "11111111-1111-4111-8111-111111111111", Name: "prov", CIDR: netip.MustParsePrefix("10.0.0.0/24"),
		MTU: 9000, DNS: []netip.Addr{netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("192.0.2.53")},
		Routes: []network.Route{{Destination: netip.MustParsePrefix("192.168.0.0/16"), Gateway: netip.MustParseAddr("10.0.0.254")}}}
	netB = network.Network{ID: "22222222-2222-4222-8222-222222222222", Name: "dhcp", CIDR: netip.MustParsePrefix("10.1.0.0/20"),
		DHCP: true, DNS: []netip.Addr{netip.MustParseAddr("10.0.0.2")}}
	netC = network.Network{ID: "33333333-3333-4333-8333-333333333333", Name: "storage", CIDR: netip.MustParsePrefix("10.2.0.0/20"),
		Gateway: netip.MustParseAddr("10.2.15.254")}
)

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNetworkData(t *testing.T) {
	nets := network.Networks{netA, netB, netC}
	tests := []struct {
		name  string
		ports []store.Port
		want  string
	}{
		{name: "none", want: `{"links":[],"networks":[],"services":[]}`},
		{name: "phy with MTU, netmask, default and static routes, DNS",
			ports: []store.Port{{ID: "p1", NetworkID: netA.ID, IP: "10.0.0.5", MAC: "52:54:00:00:00:01", Binding: store.Binding{PortUUID: "ip1"}}},
			want: `{"links":[{"ethernet_mac_address":"52:54:00:00:00:01","id":"port-p1","mtu":9000,"type":"phy","vif_id":"p1"}],` +
				`"networks":[{"id":"network0","ip_address":"10.0.0.5","link":"port-p1","netmask":"255.255.255.0","network_id":"` + netA.ID + `",` +
				`"routes":[{"gateway":"10.0.0.1","netmask":"0.0.0.0","network":"0.0.0.0"},{"gateway":"10.0.0.254","netmask":"255.255.0.0","network":"192.168.0.0"}],` +
				`"services":[{"address":"10.0.0.2","type":"dns"},{"address":"192.0.2.53","type":"dns"}],"type":"ipv4"}],` +
				`"services":[{"address":"10.0.0.2","type":"dns"},{"address":"192.0.2.53","type":"dns"}]}`},
		{name: "bond over a portgroup's ports; DHCP network; DNS listed once",
			ports: []store.Port{{ID: "p2", NetworkID: netB.ID, IP: "10.1.0.9", MAC: "52:54:00:00:00:02", Binding: store.Binding{
				PortgroupUUID: "pg1", BondMode: "802.3ad", BondProperties: map[string]any{"xmit_hash_policy": "layer3+4", "bond_miimon": "100"},
				Members: []store.BondMember{{PortUUID: "ip2", MAC: "52:54:00:00:00:02"}, {PortUUID: "ip3", MAC: "52:54:00:00:00:03"}}}},
				{ID: "p3", NetworkID: netA.ID, IP: "10.0.0.6", MAC: "52:54:00:00:00:04"}},
			want: `{"links":[{"bond_links":["ip2","ip3"],"bond_miimon":"100","bond_mode":"802.3ad","bond_xmit_hash_policy":"layer3+4",` +
				`"ethernet_mac_address":"52:54:00:00:00:02","id":"port-p2","type":"bond","vif_id":"p2"},` +
				`{"ethernet_mac_address":"52:54:00:00:00:04","id":"port-p3","mtu":9000,"type":"phy","vif_id":"p3"},` +
				`{"ethernet_mac_address":"52:54:00:00:00:02","id":"ip2","type":"phy"},{"ethernet_mac_address":"52:54:00:00:00:03","id":"ip3","type":"phy"}],` +
				`"networks":[{"id":"network0","link":"port-p2","network_id":"` + netB.ID + `","type":"ipv4_dhcp"},` +
				`{"id":"network1","ip_address":"10.0.0.6","link":"port-p3","netmask":"255.255.255.0","network_id":"` + netA.ID + `",` +
				`"routes":[{"gateway":"10.0.0.1","netmask":"0.0.0.0","network":"0.0.0.0"},{"gateway":"10.0.0.254","netmask":"255.255.0.0","network":"192.168.0.0"}],` +
				`"services":[{"address":"10.0.0.2","type":"dns"},{"address":"192.0.2.53","type":"dns"}],"type":"ipv4"}],` +
				`"services":[{"address":"10.0.0.2","type":"dns"},{"address":"192.0.2.53","type":"dns"}]}`},
		{name: "configured gateway, /20, no DNS",
			ports: []store.Port{{ID: "p4", NetworkID: netC.ID, IP: "10.2.0.7", MAC: "fa:16:3e:00:00:07"}},
			want: `{"links":[{"ethernet_mac_address":"fa:16:3e:00:00:07","id":"port-p4","type":"phy","vif_id":"p4"}],` +
				`"networks":[{"id":"network0","ip_address":"10.2.0.7","link":"port-p4","netmask":"255.255.240.0","network_id":"` + netC.ID + `",` +
				`"routes":[{"gateway":"10.2.15.254","netmask":"0.0.0.0","network":"0.0.0.0"}],"services":[],"type":"ipv4"}],"services":[]}`},
		{name: "a network no longer configured: the address alone",
			ports: []store.Port{{ID: "p5", NetworkID: "gone", IP: "10.9.0.7", MAC: "fa:16:3e:00:00:08"}},
			want: `{"links":[{"ethernet_mac_address":"fa:16:3e:00:00:08","id":"port-p5","type":"phy","vif_id":"p5"}],` +
				`"networks":[{"id":"network0","ip_address":"10.9.0.7","link":"port-p5","network_id":"gone","type":"ipv4"}],"services":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jsonOf(t, NetworkData(tt.ports, nets)); got != tt.want {
				t.Errorf("network_data.json\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func server() *lifecycle.Server {
	return &lifecycle.Server{ID: "8d1c4f9e-5a3b-4c2d-9e8f-7a6b5c4d3e2f", Name: "Web Server_01", ProjectID: "proj-1",
		Spec: lifecycle.Spec{ImageSource: "http://img/debian.qcow2", ImageChecksum: "abc", RootGB: 10,
			Metadata: map[string]string{"role": "web"}, KeyName: "alice", PublicKey: "ssh-ed25519 AAAAC3Nza alice@host",
			UserData: "I2Nsb3VkLWNvbmZpZw==", RequiredTraits: []string{"CUSTOM_GPU", "CUSTOM_RAID"},
			Capabilities: map[string]string{"boot_mode": "uefi"}}}
}

func TestMetaData(t *testing.T) {
	seed := []byte{1, 2, 3}
	got := jsonOf(t, MetaData(server(), seed))
	want := `{"availability_zone":"nova","devices":[],"hostname":"web-server-01",` +
		`"keys":[{"data":"ssh-ed25519 AAAAC3Nza alice@host","name":"alice","type":"ssh"}],"launch_index":0,` +
		`"meta":{"role":"web"},"name":"Web Server_01","project_id":"proj-1",` +
		`"public_keys":{"alice":"ssh-ed25519 AAAAC3Nza alice@host"},"random_seed":"AQID","uuid":"8d1c4f9e-5a3b-4c2d-9e8f-7a6b5c4d3e2f"}`
	if got != want {
		t.Errorf("meta_data.json\n got %s\nwant %s", got, want)
	}
	// An x509 keypair keeps its type.
	x := server()
	x.Spec.KeyType = "x509"
	if keys, _ := MetaData(x, nil)["keys"].([]any); len(keys) != 1 || keys[0].(map[string]any)["type"] != "x509" {
		t.Errorf("keys of an x509 keypair: %v", keys)
	}
	// A requested hostname is used as given; no key, no metadata, no seed: left out, as Nova does.
	s := server()
	s.Spec.Hostname, s.Spec.PublicKey, s.Spec.KeyName, s.Spec.Metadata = "Given-Host", "", "", nil
	m := MetaData(s, nil)
	for _, k := range []string{"public_keys", "keys", "meta", "random_seed", "admin_pass"} {
		if _, ok := m[k]; ok {
			t.Errorf("meta_data.json has %s: %v", k, m[k])
		}
	}
	if m["hostname"] != "Given-Host" {
		t.Errorf("hostname = %v", m["hostname"])
	}
	// The admin password and the place in a multiple create, as Nova writes them.
	p := server()
	p.Spec.AdminPass, p.Spec.LaunchIndex = "s3cret-Pass", 2
	if m := MetaData(p, nil); m["admin_pass"] != "s3cret-Pass" || m["launch_index"] != 2 {
		t.Errorf("admin_pass %v, launch_index %v", m["admin_pass"], m["launch_index"])
	}
}

func TestBuild(t *testing.T) {
	req := Build(Input{Server: server(), Networks: network.Networks{netA},
		Ports:      []store.Port{{ID: "p1", NetworkID: netA.ID, IP: "10.0.0.5", MAC: "52:54:00:00:00:01"}},
		RandomSeed: make([]byte, RandomSeedBytes)})
	wantInfo := map[string]any{"image_source": "http://img/debian.qcow2", "image_checksum": "abc", "root_gb": 10,
		"display_name": "Web Server_01", "traits": []any{"CUSTOM_GPU", "CUSTOM_RAID"},
		"capabilities": map[string]any{"boot_mode": "uefi"}}
	if !reflect.DeepEqual(req.InstanceInfo, wantInfo) {
		t.Errorf("instance_info = %v, want %v", req.InstanceInfo, wantInfo)
	}
	cd := req.ConfigDrive
	if cd.UserData != "#cloud-config" {
		t.Errorf("user_data = %q, want the decoded text", cd.UserData)
	}
	if seed, _ := cd.MetaData["random_seed"].(string); len(seed) != 684 { // base64 of 512 bytes
		t.Errorf("random_seed of %d characters", len(seed))
	}
	if links := cd.NetworkData["links"].([]any); len(links) != 1 {
		t.Errorf("links = %v", links)
	}
	// No traits or capabilities: the keys are left out.
	s := server()
	s.Spec.RequiredTraits, s.Spec.Capabilities, s.Spec.ImageChecksum = nil, nil, ""
	for _, k := range []string{"traits", "capabilities", "image_checksum"} {
		if _, ok := InstanceInfo(s)[k]; ok {
			t.Errorf("instance_info has %s", k)
		}
	}
}
