package main

import (
	"context"
	"strings"
	"testing"
)

func TestCLIFlavors(t *testing.T) {
	f := newCLIFixture(t)
	out, errOut, err := f.run("flavor", "create", "bm.gold", "--id", "gold", "--resource-class", "bm-gold", "--vcpus", "32",
		"--ram", "262144", "--disk", "900", "--trait", "CUSTOM_GPU", "--property", "capabilities:boot_mode=uefi",
		"--private", "--access", "ingot", "--description", "GPU nodes")
	if err != nil {
		t.Fatalf("create: %v\n%s%s", err, out, errOut)
	}
	for _, want := range []string{"gold", "resources:CUSTOM_BM_GOLD", "resources:VCPU", "trait:CUSTOM_GPU", "capabilities:boot_mode", "GPU nodes", "false"} {
		if !strings.Contains(out, want) {
			t.Fatalf("create shows no %q:\n%s", want, out)
		}
	}
	fl, err := f.store.GetFlavor(context.Background(), "gold")
	if err != nil || fl.IsPublic || fl.ResourceClass != "bm_gold" || fl.ExtraSpecs["trait:CUSTOM_GPU"] != "required" {
		t.Fatalf("stored %+v %v", fl, err)
	}
	if acc, _ := f.store.FlavorAccess(context.Background(), "gold"); len(acc) != 1 || acc[0] != "ingot" {
		t.Fatalf("access %v", acc)
	}
	out, _, err = f.run("flavor", "list", "--all")
	if err != nil || !strings.Contains(out, "bm.small") || !strings.Contains(out, "CUSTOM_BM_GOLD") {
		t.Fatalf("list --all: %v\n%s", err, out)
	}
	if out, _, err = f.run("flavor", "show", "gold", "-o", "json"); err != nil || !strings.Contains(out, `"extra_specs"`) {
		t.Fatalf("show json: %v\n%s", err, out)
	}
	if _, _, err := f.run("flavor", "create", "bad", "--property", "novalue"); err == nil {
		t.Fatal("a property without = was accepted")
	}
	if _, _, err := f.run("flavor", "delete", "1"); err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatalf("delete a configured flavor: %v", err)
	}
	if out, _, err := f.run("flavor", "delete", "gold"); err != nil || !strings.Contains(out, "deleted") {
		t.Fatalf("delete: %v %s", err, out)
	}
	if _, _, err := f.run("flavor", "show", "gold"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("show after delete: %v", err)
	}
}
