package portbind

import (
	"errors"
	"strings"
	"testing"
)

func port(id string, pxe bool, physnet, pg string) Port {
	return Port{UUID: id, MAC: "52:54:00:00:00:" + id[len(id)-2:], PXE: pxe, Physnet: physnet, Portgroup: pg}
}

func TestChoose(t *testing.T) {
	bond := Inventory{
		Ports: []Port{port("p-01", true, "", ""), port("p-02", false, "", "pg-1"), port("p-03", false, "", "pg-1")},
		Portgroups: []Portgroup{{UUID: "pg-1", Mode: "802.3ad", Properties: map[string]any{"xmit_hash_policy": "layer3+4"}},
			{UUID: "pg-empty", Mode: "active-backup"}},
	}
	tests := []struct {
		name string
		inv  Inventory
		reqs []Request
		want []string // targets in request order ("p-01", "pg:pg-1"), or the error text
		macs []string
	}{
		{name: "PXE first", inv: Inventory{Ports: []Port{port("p-01", false, "", ""), port("p-02", true, "", "")}},
			reqs: []Request{{PortID: "a"}}, want: []string{"p-02"}, macs: []string{"52:54:00:00:00:02"}},
		{name: "Ironic's order among equals", inv: Inventory{Ports: []Port{port("p-01", true, "", ""), port("p-02", true, "", "")}},
			reqs: []Request{{PortID: "a"}, {PortID: "b"}}, want: []string{"p-01", "p-02"}},
		{name: "portgroup before port; its ports only through it; empty portgroup ignored", inv: bond,
			reqs: []Request{{PortID: "a"}, {PortID: "b"}}, want: []string{"pg:pg-1", "p-01"},
			macs: []string{"52:54:00:00:00:02", "52:54:00:00:00:01"}},
		{name: "portgroup of two counts once", inv: bond,
			reqs: []Request{{PortID: "a"}, {PortID: "b"}, {PortID: "c"}}, want: []string{"2 free Ironic port(s) or portgroup(s) for 3 network(s)"}},
		{name: "physical network matched first", inv: Inventory{Ports: []Port{port("p-01", true, "", ""), port("p-02", false, "storage", "")}},
			reqs: []Request{{PortID: "a", Physnet: "storage"}}, want: []string{"p-02"}},
		{name: "a port of another physical network is never used", inv: Inventory{Ports: []Port{port("p-01", true, "other", "")}},
			reqs: []Request{{PortID: "a", Physnet: "storage"}},
			want: []string{`no free Ironic port or portgroup on physical network "storage"`}},
		{name: "a port without physical network serves any", inv: Inventory{Ports: []Port{port("p-01", true, "", "")}},
			reqs: []Request{{PortID: "a", Physnet: "storage"}}, want: []string{"p-01"}},
		{name: "constrained networks placed first", inv: Inventory{Ports: []Port{port("p-01", true, "storage", ""), port("p-02", false, "", "")}},
			reqs: []Request{{PortID: "any"}, {PortID: "st", Physnet: "storage"}}, want: []string{"p-02", "p-01"}},
		{name: "a port with a foreign VIF is not free", inv: Inventory{Ports: []Port{{UUID: "p-01", PXE: true, VIF: "someone"}, port("p-02", false, "", "")}},
			reqs: []Request{{PortID: "a"}}, want: []string{"p-02"}},
		{name: "our own VIF stays where it is", inv: Inventory{Ports: []Port{port("p-01", true, "", ""), {UUID: "p-02", VIF: "b"}}},
			reqs: []Request{{PortID: "a"}, {PortID: "b"}}, want: []string{"p-01", "p-02"}},
		{name: "the recorded binding is kept on a retry", inv: Inventory{Ports: []Port{port("p-01", true, "", ""), port("p-02", true, "", "")}},
			reqs: []Request{{PortID: "a", Current: Target{Port: "p-02"}}, {PortID: "b"}}, want: []string{"p-02", "p-01"}},
		{name: "a portgroup with a foreign VIF on a port is used as its other ports", inv: Inventory{
			Ports:      []Port{{UUID: "p-01", Portgroup: "pg-1", VIF: "x"}, port("p-02", false, "", "pg-1")},
			Portgroups: []Portgroup{{UUID: "pg-1"}}},
			reqs: []Request{{PortID: "a"}}, want: []string{"p-02"}},
		{name: "a portgroup with a foreign VIF is not free", inv: Inventory{
			Ports: []Port{port("p-01", false, "", "pg-1"), port("p-02", false, "", "")}, Portgroups: []Portgroup{{UUID: "pg-1", VIF: "x"}}},
			reqs: []Request{{PortID: "a"}}, want: []string{"p-02"}},
		{name: "a portgroup's own MAC", inv: Inventory{Ports: []Port{port("p-01", true, "", "pg-1")}, Portgroups: []Portgroup{{UUID: "pg-1", MAC: "52:54:00:aa:bb:cc"}}},
			reqs: []Request{{PortID: "a"}}, want: []string{"pg:pg-1"}, macs: []string{"52:54:00:aa:bb:cc"}},
		{name: "too few ports", inv: Inventory{Ports: []Port{port("p-01", true, "", "")}},
			reqs: []Request{{PortID: "a"}, {PortID: "b"}}, want: []string{"1 free Ironic port(s) or portgroup(s) for 2 network(s)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Choose(tt.inv, tt.reqs)
			if err != nil {
				var ne *NotEnoughError
				if !errors.As(err, &ne) || len(tt.want) != 1 || !strings.Contains(err.Error(), tt.want[0]) {
					t.Fatalf("Choose: %v, want %v", err, tt.want)
				}
				return
			}
			var targets []string
			for _, c := range got {
				if c.Target.Portgroup != "" {
					targets = append(targets, "pg:"+c.Target.Portgroup)
				} else {
					targets = append(targets, c.Target.Port)
				}
			}
			if strings.Join(targets, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("targets %v, want %v", targets, tt.want)
			}
			for i, m := range tt.macs {
				if got[i].MAC != m {
					t.Errorf("request %d: MAC %s, want %s", i, got[i].MAC, m)
				}
			}
		})
	}
}

func TestChooseBondDetails(t *testing.T) {
	inv := Inventory{
		Ports:      []Port{port("p-01", false, "", "pg-1"), port("p-02", false, "", "pg-1")},
		Portgroups: []Portgroup{{UUID: "pg-1", Mode: "802.3ad", Properties: map[string]any{"miimon": 100}}},
	}
	got, err := Choose(inv, []Request{{PortID: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	c := got[0]
	if c.Mode != "802.3ad" || c.Properties["miimon"] != 100 || len(c.Members) != 2 || c.Members[1].UUID != "p-02" {
		t.Fatalf("bond choice = %+v", c)
	}
}

func TestChooseNoPorts(t *testing.T) {
	if _, err := Choose(Inventory{}, []Request{{PortID: "a"}}); !errors.Is(err, ErrNoPorts) {
		t.Fatalf("got %v, want ErrNoPorts", err)
	}
}

func TestFits(t *testing.T) {
	two := []Port{port("p-01", true, "", ""), port("p-02", false, "", "pg"), port("p-03", false, "", "pg")}
	tests := []struct {
		ports    []Port
		physnets []string
		want     bool
	}{
		{nil, []string{"", ""}, true}, // no ports at all: generated MACs
		{two, nil, true},
		{two, []string{"", ""}, true},
		{two, []string{"", "", ""}, false}, // the portgroup counts once
		{[]Port{port("p-01", true, "a", "")}, []string{"b"}, false},
		{[]Port{port("p-01", true, "a", ""), port("p-02", true, "", "")}, []string{"", "a"}, true},
	}
	for i, tt := range tests {
		if got := Fits(tt.ports, tt.physnets); got != tt.want {
			t.Errorf("%d: Fits(%d ports, %q) = %v, want %v", i, len(tt.ports), tt.physnets, got, tt.want)
		}
	}
}
