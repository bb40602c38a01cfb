package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store"
)

// projectServer is a new server of a project with sizes.
func projectServer(id, project string, vcpus, ram int, rc string) *lifecycle.Server {
	s := MinimalServer(id, T0)
	s.ProjectID, s.UserID = project, "u-"+project
	s.Spec.VCPUs, s.Spec.RAMMB, s.Spec.ResourceClass = vcpus, ram, rc
	return s
}

// testListProject: ListOptions.ProjectID keeps one project's servers,
// paging included; "" lists every project.
func testListProject(t *testing.T, st store.Store) {
	for i := range 6 {
		project := []string{"a", "b"}[i%2]
		s := projectServer(fmt.Sprintf("s%d", i), project, 1, 1, "rc")
		s.CreatedAt = T0.Add(time.Duration(i) * time.Second)
		mustCreate(t, st, s)
	}
	var got []string
	opts := store.ListOptions{ProjectID: "a", Limit: 2}
	for {
		page, err := st.ListServers(ctx(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(page)...)
		if len(page) < opts.Limit {
			break
		}
		opts.Marker = page[len(page)-1].ID
	}
	if strings.Join(got, ",") != "s0,s2,s4" {
		t.Fatalf("project a lists %v, want s0,s2,s4", got)
	}
	if all, _ := st.ListServers(ctx(t), store.ListOptions{}); len(all) != 6 {
		t.Fatalf("every project: %d servers, want 6", len(all))
	}
	if none, _ := st.ListServers(ctx(t), store.ListOptions{ProjectID: "c"}); len(none) != 0 {
		t.Fatalf("project c lists %v", ids(none))
	}
}

// testQuotaCreate: CreateServerWithin counts live servers of the project
// only, stops at each limit with Nova's message, lets overrides win over
// the defaults, and stops counting a server once its delete is requested.
func testQuotaCreate(t *testing.T, st store.Store) {
	defaults := store.Limits{store.ResInstances: 2, store.ResCores: 10, store.ResRAM: -1}
	mustWithin := func(s *lifecycle.Server) {
		t.Helper()
		if err := st.CreateServerWithin(ctx(t), s, defaults); err != nil {
			t.Fatalf("CreateServerWithin(%s): %v", s.ID, err)
		}
	}
	mustWithin(projectServer("a1", "a", 4, 100, "gold"))
	mustWithin(projectServer("b1", "b", 4, 100, "gold")) // another project's counts apart
	mustWithin(projectServer("a2", "a", 4, 100, "gold"))
	err := st.CreateServerWithin(ctx(t), projectServer("a3", "a", 1, 1, "gold"), defaults)
	var qe *store.QuotaExceededError
	if !errors.As(err, &qe) || !errors.Is(err, store.ErrQuotaExceeded) {
		t.Fatalf("third server of a: %v, want a quota error", err)
	}
	if want := "Quota exceeded for instances: Requested 1, but already used 2 of 2 instances"; err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
	if _, gerr := st.GetServer(ctx(t), "a3"); !errors.Is(gerr, store.ErrNotFound) {
		t.Fatalf("a refused server was written: %v", gerr)
	}
	u, err := st.Usage(ctx(t), "a")
	if err != nil || u.Instances != 2 || u.Cores != 8 || u.RAM != 200 || u.ByClass["gold"] != 2 {
		t.Fatalf("usage of a = %+v, %v", u, err)
	}
	// An override raises instances; cores (8 of 10) stops the next 4-core server.
	if err := st.SetQuotas(ctx(t), "a", store.Limits{store.ResInstances: 5}); err != nil {
		t.Fatal(err)
	}
	err = st.CreateServerWithin(ctx(t), projectServer("a3", "a", 4, 1, "gold"), defaults)
	if !errors.As(err, &qe) || qe.Resource != store.ResCores || qe.Used != 8 || qe.Limit != 10 || qe.Requested != 4 {
		t.Fatalf("4 more cores: %v, want cores exceeded (8 of 10)", err)
	}
	// A per-class limit.
	if err := st.SetQuotas(ctx(t), "a", store.Limits{store.ClassPrefix + "gold": 2}); err != nil {
		t.Fatal(err)
	}
	err = st.CreateServerWithin(ctx(t), projectServer("a3", "a", 1, 1, "gold"), defaults)
	if !errors.As(err, &qe) || qe.Resource != "class:gold" {
		t.Fatalf("third gold server: %v, want class:gold exceeded", err)
	}
	mustWithin(projectServer("a3", "a", 1, 1, "silver"))
	if over, err := st.QuotaOverrides(ctx(t), "a"); err != nil || over[store.ResInstances] != 5 || over["class:gold"] != 2 || len(over) != 2 {
		t.Fatalf("overrides of a = %v, %v", over, err)
	}
	// A delete frees the unit at once (the user no longer sees the server).
	if err := st.RequestDelete(ctx(t), "a1", "req-del", T0); err != nil {
		t.Fatal(err)
	}
	mustWithin(projectServer("a4", "a", 1, 1, "gold"))
	if err := st.DeleteQuotas(ctx(t), "a"); err != nil {
		t.Fatal(err)
	}
	if over, _ := st.QuotaOverrides(ctx(t), "a"); len(over) != 0 {
		t.Fatalf("overrides after delete: %v", over)
	}
	// Unlimited (nil) defaults: CreateServerWithin is CreateServer.
	for i := range 5 {
		if err := st.CreateServerWithin(ctx(t), projectServer(fmt.Sprintf("c%d", i), "c", 100, 100, "x"), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// testQuotaRace: creates racing for the last free instance: exactly one wins.
func testQuotaRace(t *testing.T, st store.Store) {
	const racers = 8
	defaults := store.Limits{store.ResInstances: 3}
	for i := range 2 {
		mustCreate(t, st, projectServer(fmt.Sprintf("pre%d", i), "a", 1, 1, "rc"))
	}
	var wg sync.WaitGroup
	errs := make([]error, racers)
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			errs[i] = st.CreateServerWithin(ctx(t), projectServer(fmt.Sprintf("r%d", i), "a", 1, 1, "rc"), defaults)
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrQuotaExceeded):
			t.Errorf("racer %d: %v", i, err)
		}
	}
	if u, _ := st.Usage(ctx(t), "a"); won != 1 || u.Instances != 3 {
		t.Fatalf("%d creates won the last instance (usage %d), want 1 (3)", won, u.Instances)
	}
}

// testProjectVolumes: volumes keep their project; ListProjectVolumes
// lists one project's; a server cannot reserve another project's volume
// (it is not found), while an unowned one is anyone's.
func testProjectVolumes(t *testing.T, st store.Store) {
	for i, p := range []string{"a", "b", "a", ""} {
		v := store.NewVolume(fmt.Sprintf("v%d", i), "n", 1, "", T0)
		v.ProjectID, v.UserID = p, "u"+p
		if err := st.CreateVolume(ctx(t), v); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := st.GetVolume(ctx(t), "v1"); err != nil || v.ProjectID != "b" || v.UserID != "ub" {
		t.Fatalf("GetVolume(v1) = %+v, %v", v, err)
	}
	if vs, err := st.ListProjectVolumes(ctx(t), "a", "", 0); err != nil || volumeIDs(vs) != "v0,v2" {
		t.Fatalf("project a volumes = %s, %v", volumeIDs(vs), err)
	}
	if vs, err := st.ListProjectVolumes(ctx(t), "a", "v0", 1); err != nil || volumeIDs(vs) != "v2" {
		t.Fatalf("project a after v0 = %s, %v", volumeIDs(vs), err)
	}
	s := projectServer("s1", "a", 1, 1, "rc")
	s.Spec.Volumes = []lifecycle.VolumeRef{{ID: "v1", BootIndex: -1}}
	if err := st.CreateServer(ctx(t), s); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("reserving project b's volume for a: %v, want ErrNotFound", err)
	}
	s.Spec.Volumes = []lifecycle.VolumeRef{{ID: "v0", BootIndex: 0}, {ID: "v3", BootIndex: -1}}
	mustCreate(t, st, s)
	if v, _ := st.GetVolume(ctx(t), "v3"); v.ServerID != "s1" {
		t.Fatalf("unowned volume not reserved: %+v", v)
	}
}

// testKeypairs: per-user names, the key_pairs limit checked with the
// insert, paging by name, delete.
func testKeypairs(t *testing.T, st store.Store) {
	kp := func(user, name string) store.Keypair {
		return store.Keypair{UserID: user, Name: name, Type: "ssh", PublicKey: "ssh-ed25519 AAAA " + name,
			Fingerprint: "aa:bb", CreatedAt: T0}
	}
	for _, name := range []string{"k2", "k1", "k3"} {
		if err := st.CreateKeypair(ctx(t), kp("u1", name), 3); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.CreateKeypair(ctx(t), kp("u2", "k1"), 3); err != nil {
		t.Fatalf("another user's k1: %v", err)
	}
	wantErr(t, "duplicate name", st.CreateKeypair(ctx(t), kp("u1", "k1"), -1), store.ErrExists)
	err := st.CreateKeypair(ctx(t), kp("u1", "k4"), 3)
	var qe *store.QuotaExceededError
	if !errors.As(err, &qe) || qe.Resource != store.ResKeyPairs || qe.Used != 3 {
		t.Fatalf("fourth keypair with limit 3: %v", err)
	}
	got, err := st.GetKeypair(ctx(t), "u1", "k2")
	if err != nil || got.PublicKey != "ssh-ed25519 AAAA k2" || got.Type != "ssh" || !got.CreatedAt.Equal(T0) {
		t.Fatalf("GetKeypair = %+v, %v", got, err)
	}
	_, err = st.GetKeypair(ctx(t), "u2", "k2")
	wantErr(t, "another user's keypair", err, store.ErrNotFound)
	page, err := st.ListKeypairs(ctx(t), "u1", "k1", 1)
	if err != nil || len(page) != 1 || page[0].Name != "k2" {
		t.Fatalf("ListKeypairs after k1 = %+v, %v", page, err)
	}
	if all, _ := st.ListKeypairs(ctx(t), "u1", "", 0); len(all) != 3 || all[0].Name != "k1" {
		t.Fatalf("ListKeypairs = %+v", all)
	}
	wantErr(t, "delete another user's", st.DeleteKeypair(ctx(t), "u2", "k3"), store.ErrNotFound)
	if err := st.DeleteKeypair(ctx(t), "u1", "k3"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "delete twice", st.DeleteKeypair(ctx(t), "u1", "k3"), store.ErrNotFound)
	if n, err := st.CountKeypairs(ctx(t), "u1"); err != nil || n != 2 {
		t.Fatalf("CountKeypairs = %d, %v", n, err)
	}
}
