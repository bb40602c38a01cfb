package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func creds(project, user string, roles ...string) Creds {
	return Creds{ProjectID: project, UserID: user, Roles: roles}
}

func TestDefaults(t *testing.T) {
	e, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	own := Target{"project_id": "a", "user_id": "ua"}
	other := Target{"project_id": "b", "user_id": "ub"}
	tests := []struct {
		rule   string
		c      Creds
		target Target
		want   bool
	}{
		{ServersShow, creds("a", "ua", "reader"), own, true},
		{ServersShow, creds("a", "ua", "reader"), other, false},
		{ServersShow, creds("a", "ua"), own, false}, // no role at all
		{ServersCreate, creds("a", "ua", "reader"), own, false},
		{ServersCreate, creds("a", "ua", "reader", "member"), own, true},
		{ServersCreate, creds("a", "ua", "member"), other, false},
		{ServersCreate, creds("a", "ua", "admin"), other, true},
		{ServersDetailAll, creds("a", "ua", "member", "reader"), own, false},
		{ServersDetailAll, creds("a", "ua", "ADMIN"), own, true}, // roles compare without case, as Keystone's names
		{NodesIndex, creds("a", "ua", "member"), own, false},
		{QuotaUpdate, creds("a", "ua", "member"), own, false},
		{QuotaDefaults, creds("", ""), nil, true},
		{KeypairsShow, creds("a", "ua", "reader"), own, true},
		{KeypairsShow, creds("a", "ua", "member"), Target{"user_id": "ub"}, false},
		{KeypairsShow, creds("a", "ua", "admin"), Target{"user_id": "ub"}, true},
		{ExtendedAttributes, creds("a", "ua", "member"), own, false},
		{"no-such-rule", creds("a", "ua", "admin"), own, false},
		// An empty credential never matches an empty target value.
		{ServersShow, creds("", "", "reader"), Target{"project_id": ""}, false},
	}
	for _, tc := range tests {
		if got := e.Allowed(tc.rule, tc.c, tc.target); got != tc.want {
			t.Errorf("%s by %+v on %v = %v, want %v", tc.rule, tc.c, tc.target, got, tc.want)
		}
	}
}

func TestCheckStrings(t *testing.T) {
	tests := []struct {
		check string
		c     Creds
		want  bool
	}{
		{"", creds("a", "u"), true},
		{"@", creds("a", "u"), true},
		{"!", creds("a", "u", "admin"), false},
		{"role:x or role:y", creds("a", "u", "y"), true},
		{"role:x and role:y", creds("a", "u", "y"), false},
		{"not role:x", creds("a", "u", "y"), true},
		{"(role:x or role:y) and project_id:%(project_id)s", creds("a", "u", "y"), true},
		{"(role:x or role:y) and project_id:%(project_id)s", creds("b", "u", "y"), false},
		{"role:x or role:y and project_id:%(project_id)s", creds("b", "u", "x"), true}, // and binds tighter
		{"user_id:u", creds("a", "u"), true},
		{"project_id:b", creds("a", "u"), false},
		{"rule:context_is_admin", creds("a", "u", "admin"), true},
		{"is_admin:True", creds("a", "u", "admin"), true},
		{"is_admin:False", creds("a", "u", "admin"), false},
	}
	for _, tc := range tests {
		e, err := New(map[string]string{"t": tc.check})
		if err != nil {
			t.Fatalf("%q: %v", tc.check, err)
		}
		if got := e.Allowed("t", tc.c, Target{"project_id": "a"}); got != tc.want {
			t.Errorf("%q by %+v = %v, want %v", tc.check, tc.c, got, tc.want)
		}
	}
}

func TestBadPolicies(t *testing.T) {
	for check, want := range map[string]string{
		"role:x and":             "ends early",
		"(role:x":                "missing ')'",
		"role:x )":               "unexpected",
		"frob:1":                 "unknown credential",
		"rule:nope":              "does not exist",
		"rule:loop":              "loop",
		"role":                   "want kind:value",
		"role:x or or role:y":    "unexpected",
		"project_id:%(x)s extra": "unexpected",
	} {
		_, err := New(map[string]string{"t": check, "loop": "rule:loop2", "loop2": "rule:t"})
		if check != "rule:loop" {
			_, err = New(map[string]string{"t": check})
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one saying %q", check, err, want)
		}
	}
}

func TestLoadOverrides(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	// A reader may create servers; nodes are for members too.
	if err := os.WriteFile(path, []byte(`
"os_compute_api:servers:create": "rule:project_reader_or_admin"
"ingot:nodes:index": "role:member"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Allowed(ServersCreate, creds("a", "u", "reader"), Target{"project_id": "a"}) {
		t.Error("override of servers:create not applied")
	}
	if !e.Allowed(NodesIndex, creds("a", "u", "member"), nil) {
		t.Error("override of nodes:index not applied")
	}
	if e.Allowed(ServersDelete, creds("a", "u", "reader"), Target{"project_id": "a"}) {
		t.Error("a rule not in the file lost its default")
	}
	if err := os.WriteFile(path, []byte("- not a map\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil {
		t.Error("a list was accepted as a policy file")
	}
}

func TestEveryDefaultParses(t *testing.T) {
	e, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Rules()) != len(Defaults) {
		t.Fatalf("%d rules, %d defaults: a name is repeated", len(e.Rules()), len(Defaults))
	}
}

// TestDocumented: docs/policy.md lists every rule with its default.
func TestDocumented(t *testing.T) {
	raw, err := os.ReadFile("../../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Defaults {
		if row := "| `" + r.Name + "` | `" + r.Check + "` |"; !strings.Contains(string(raw), row) {
			t.Errorf("docs/policy.md lacks the row of %s (%s)", r.Name, r.Check)
		}
	}
}
