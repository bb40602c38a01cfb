package storetest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

func strp(s string) *string { return &s }

// testFlavors: create, get, list by project access, update, access, delete.
func testFlavors(t *testing.T, st store.Store) {
	pub := store.Flavor{ID: "f1", Name: "pub", VCPUs: 2, RAMMB: 512, DiskGB: 10, SwapMB: 5, EphemeralGB: 1,
		RxTxFactor: 1.5, IsPublic: true, Description: strp("d"), ExtraSpecs: map[string]string{"resources:CUSTOM_X": "1"},
		CreatedAt: T0}
	priv := store.Flavor{ID: "f2", Name: "priv", VCPUs: 1, RAMMB: 1, DiskGB: 1, RxTxFactor: 1, CreatedAt: T0}
	for _, f := range []store.Flavor{pub, priv} {
		if err := st.CreateFlavor(ctx(t), f); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.CreateFlavor(ctx(t), store.Flavor{ID: "f1", Name: "other"}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate id: %v", err)
	}
	if err := st.CreateFlavor(ctx(t), store.Flavor{ID: "f3", Name: "pub"}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate name: %v", err)
	}
	got, err := st.GetFlavor(ctx(t), "f1")
	if err != nil {
		t.Fatal(err)
	}
	got.CreatedAt = got.CreatedAt.In(T0.Location())
	if !got.CreatedAt.Equal(T0) {
		t.Fatalf("created_at %v", got.CreatedAt)
	}
	got.CreatedAt = T0
	if !reflect.DeepEqual(got, pub) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, pub)
	}
	if g2, _ := st.GetFlavor(ctx(t), "f2"); g2.Description != nil || g2.ExtraSpecs == nil {
		t.Fatalf("no description must read nil and no specs an empty map: %+v", g2)
	}
	if _, err := st.GetFlavor(ctx(t), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	names := func(project string) string {
		fs, err := st.ListFlavors(ctx(t), project)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, f := range fs {
			n = append(n, f.ID)
		}
		return strings.Join(n, ",")
	}
	if n := names(""); n != "f1,f2" {
		t.Fatalf("all: %s", n)
	}
	if n := names("p"); n != "f1" {
		t.Fatalf("project without access: %s", n)
	}
	if err := st.AddFlavorAccess(ctx(t), "f2", "p"); err != nil {
		t.Fatal(err)
	}
	if err := st.AddFlavorAccess(ctx(t), "f2", "p"); !errors.Is(err, store.ErrExists) {
		t.Fatalf("repeat access: %v", err)
	}
	if err := st.AddFlavorAccess(ctx(t), "nope", "p"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("access to unknown: %v", err)
	}
	_ = st.AddFlavorAccess(ctx(t), "f2", "a")
	if acc, _ := st.FlavorAccess(ctx(t), "f2"); strings.Join(acc, ",") != "a,p" {
		t.Fatalf("access %v", acc)
	}
	if acc, err := st.FlavorAccess(ctx(t), "f1"); err != nil || acc == nil || len(acc) != 0 {
		t.Fatalf("no access: %v %v", acc, err)
	}
	if n := names("p"); n != "f1,f2" {
		t.Fatalf("project with access: %s", n)
	}
	if err := st.RemoveFlavorAccess(ctx(t), "f2", "p"); err != nil {
		t.Fatal(err)
	}
	if err := st.RemoveFlavorAccess(ctx(t), "f2", "p"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("remove again: %v", err)
	}
	up, err := st.UpdateFlavor(ctx(t), "f2", func(f *store.Flavor) error {
		f.Description = strp("new")
		f.ExtraSpecs["k"] = "v"
		f.ResourceClass = "gold"
		f.Name = "ignored"
		return nil
	})
	if err != nil || *up.Description != "new" {
		t.Fatalf("update: %+v %v", up, err)
	}
	if g, _ := st.GetFlavor(ctx(t), "f2"); g.Name != "priv" || *g.Description != "new" || g.ExtraSpecs["k"] != "v" || g.ResourceClass != "gold" {
		t.Fatalf("after update %+v", g)
	}
	boom := errors.New("boom")
	if _, err := st.UpdateFlavor(ctx(t), "f2", func(f *store.Flavor) error { f.ExtraSpecs = nil; return boom }); err != boom {
		t.Fatalf("mutate error: %v", err)
	}
	if g, _ := st.GetFlavor(ctx(t), "f2"); g.ExtraSpecs["k"] != "v" {
		t.Fatal("a failed update wrote")
	}
	if _, err := st.UpdateFlavor(ctx(t), "nope", func(*store.Flavor) error { return nil }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update unknown: %v", err)
	}
	if err := st.DeleteFlavor(ctx(t), "f2"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteFlavor(ctx(t), "f2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete again: %v", err)
	}
	if _, err := st.FlavorAccess(ctx(t), "f2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("access of deleted: %v", err)
	}
	// A new flavor of the old id starts with no access list.
	_ = st.CreateFlavor(ctx(t), store.Flavor{ID: "f2", Name: "again"})
	if acc, _ := st.FlavorAccess(ctx(t), "f2"); len(acc) != 0 {
		t.Fatalf("access survived the delete: %v", acc)
	}
}

// testFlavorSeed: seeding replaces the configured flavors, keeps their
// created_at and access, and releases those no longer configured.
func testFlavorSeed(t *testing.T, st store.Store) {
	seed := []store.Flavor{{ID: "s1", Name: "one", VCPUs: 1, ResourceClass: "baremetal", IsPublic: true, CreatedAt: T0},
		{ID: "s2", Name: "two", IsPublic: true, CreatedAt: T0}}
	if err := st.SeedFlavors(ctx(t), seed); err != nil {
		t.Fatal(err)
	}
	_ = st.AddFlavorAccess(ctx(t), "s1", "p")
	seed[0].VCPUs, seed[0].CreatedAt = 8, T0.Add(time.Hour)
	if err := st.SeedFlavors(ctx(t), seed[:1]); err != nil {
		t.Fatal(err)
	}
	s1, _ := st.GetFlavor(ctx(t), "s1")
	if !s1.Seeded || s1.VCPUs != 8 || !s1.CreatedAt.Equal(T0) || s1.ResourceClass != "baremetal" {
		t.Fatalf("reseeded %+v", s1)
	}
	if acc, _ := st.FlavorAccess(ctx(t), "s1"); len(acc) != 1 {
		t.Fatalf("access lost by the seed: %v", acc)
	}
	if s2, err := st.GetFlavor(ctx(t), "s2"); err != nil || s2.Seeded {
		t.Fatalf("unconfigured flavor: %+v %v", s2, err)
	}
	if err := st.CreateFlavor(ctx(t), store.Flavor{ID: "api", Name: "taken"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SeedFlavors(ctx(t), []store.Flavor{{ID: "s3", Name: "taken"}}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("seed with a taken name: %v", err)
	}
	if s1, _ := st.GetFlavor(ctx(t), "s1"); !s1.Seeded {
		t.Fatal("a failed seed wrote")
	}
}

// testServerGroups: groups, quota, membership written with the create,
// members are the live servers.
func testServerGroups(t *testing.T, st store.Store) {
	g := store.ServerGroup{ID: "g1", Name: "web", ProjectID: "project", UserID: "user",
		Policy: store.PolicyAntiAffinity, MaxServerPerHost: 2, CreatedAt: T0}
	if err := st.CreateServerGroup(ctx(t), g, 1); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateServerGroup(ctx(t), store.ServerGroup{ID: "g2", ProjectID: "project", Policy: "affinity"}, 1); !errors.Is(err, store.ErrQuotaExceeded) {
		t.Fatalf("second group past the quota: %v", err)
	}
	if err := st.CreateServerGroup(ctx(t), store.ServerGroup{ID: "g2", ProjectID: "other", Policy: "affinity", CreatedAt: T0.Add(time.Second)}, 1); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateServerGroup(ctx(t), g, -1); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate: %v", err)
	}
	s := MinimalServer("m1", T0)
	s.Spec.Group = &lifecycle.GroupRef{ID: "g1", Policy: g.Policy}
	mustCreate(t, st, s)
	s2 := MinimalServer("m2", T0.Add(time.Second))
	s2.Spec.Group = &lifecycle.GroupRef{ID: "g1", Policy: g.Policy}
	if err := st.CreateServerWithin(ctx(t), s2, store.Limits{store.ResServerGroupMembers: 1}); !errors.Is(err, store.ErrQuotaExceeded) {
		t.Fatalf("member past the quota: %v", err)
	}
	if _, err := st.GetServer(ctx(t), "m2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("refused member was written")
	}
	if err := st.CreateServerWithin(ctx(t), s2, store.Limits{store.ResServerGroupMembers: 2}); err != nil {
		t.Fatal(err)
	}
	lost := MinimalServer("m3", T0)
	lost.Spec.Group = &lifecycle.GroupRef{ID: "gone"}
	if err := st.CreateServer(ctx(t), lost); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown group: %v", err)
	}
	if _, err := st.GetServer(ctx(t), "m3"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("server of an unknown group was written")
	}
	got, err := st.GetServerGroup(ctx(t), "g1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "web" || got.MaxServerPerHost != 2 || got.Policy != g.Policy || !got.CreatedAt.Equal(T0) ||
		strings.Join(got.Members, ",") != "m1,m2" {
		t.Fatalf("group %+v", got)
	}
	if gs, _ := st.ServerGroupsOf(ctx(t), "m1"); len(gs) != 1 || gs[0] != "g1" {
		t.Fatalf("groups of m1: %v", gs)
	}
	if gs, err := st.ServerGroupsOf(ctx(t), "nobody"); err != nil || gs == nil || len(gs) != 0 {
		t.Fatalf("groups of a server without: %v %v", gs, err)
	}
	// A node shows in GroupMembers; a delete request ends membership.
	s.NodeID = "node-1"
	if err := st.SaveServer(ctx(t), s); err != nil {
		t.Fatal(err)
	}
	ms, _ := st.GroupMembers(ctx(t), "g1")
	if len(ms) != 2 || ms[0].ServerID != "m1" || ms[0].NodeID != "node-1" || ms[0].Phase != lifecycle.PhasePending ||
		!ms[0].CreatedAt.Equal(T0) || ms[1].ServerID != "m2" || ms[1].NodeID != "" {
		t.Fatalf("members %+v", ms)
	}
	if err := st.RequestDelete(ctx(t), "m2", "req-del", T0); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetServerGroup(ctx(t), "g1"); strings.Join(got.Members, ",") != "m1" {
		t.Fatalf("members after a delete %v", got.Members)
	}
	all, _ := st.ListServerGroups(ctx(t), "")
	mine, _ := st.ListServerGroups(ctx(t), "project")
	if len(all) != 2 || all[0].ID != "g1" || len(mine) != 1 || mine[0].Members[0] != "m1" || all[1].Members == nil {
		t.Fatalf("lists %+v / %+v", all, mine)
	}
	if err := st.DeleteServerGroup(ctx(t), "g1"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteServerGroup(ctx(t), "g1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete again: %v", err)
	}
	if _, err := st.GetServer(ctx(t), "m1"); err != nil {
		t.Fatalf("a group delete removed its member: %v", err)
	}
	if gs, _ := st.ServerGroupsOf(ctx(t), "m1"); len(gs) != 0 {
		t.Fatalf("membership outlived the group: %v", gs)
	}
}

// testServices: register, heartbeat, update, delete.
func testServices(t *testing.T, st store.Store) {
	a, err := st.RegisterService(ctx(t), "h1", store.BinaryCompute, T0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := st.RegisterService(ctx(t), "h1", store.BinaryScheduler, T0)
	if a.ID == b.ID || a.UUID == "" || a.UUID == b.UUID || a.Host != "h1" || a.Binary != store.BinaryCompute ||
		!a.UpdatedAt.Equal(T0) || a.Disabled || a.DisabledReason != nil {
		t.Fatalf("registered %+v %+v", a, b)
	}
	dis, reason := true, strp("maintenance")
	u, err := st.UpdateService(ctx(t), a.UUID, store.ServiceUpdate{Disabled: &dis, DisabledReason: &reason})
	if err != nil || !u.Disabled || *u.DisabledReason != "maintenance" || u.ForcedDown {
		t.Fatalf("update %+v %v", u, err)
	}
	// A restart re-registers: same row, the disable kept.
	again, _ := st.RegisterService(ctx(t), "h1", store.BinaryCompute, T0.Add(time.Minute))
	if again.ID != a.ID || again.UUID != a.UUID || !again.Disabled || !again.UpdatedAt.Equal(T0.Add(time.Minute)) {
		t.Fatalf("re-registered %+v", again)
	}
	if err := st.Heartbeat(ctx(t), "h1", T0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := st.Heartbeat(ctx(t), "h2", T0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("heartbeat of no service: %v", err)
	}
	fd := true
	var none *string
	u, _ = st.UpdateService(ctx(t), a.UUID, store.ServiceUpdate{ForcedDown: &fd, DisabledReason: &none})
	if !u.ForcedDown || u.DisabledReason != nil || !u.Disabled {
		t.Fatalf("forced down %+v", u)
	}
	list, _ := st.ListServices(ctx(t))
	if len(list) != 2 || list[0].ID != a.ID || !list[1].UpdatedAt.Equal(T0.Add(time.Hour)) {
		t.Fatalf("list %+v", list)
	}
	if _, err := st.UpdateService(ctx(t), "nope", store.ServiceUpdate{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update unknown: %v", err)
	}
	if err := st.DeleteService(ctx(t), a.UUID); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteService(ctx(t), a.UUID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete again: %v", err)
	}
}
