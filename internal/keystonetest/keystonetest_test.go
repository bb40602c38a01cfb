package keystonetest

import "testing"

// TestStart: tokens of every user carry their project and roles (with
// Keystone's implied roles), and a revoked token stops validating.
func TestStart(t *testing.T) {
	e := Start(t)
	t.Logf("Keystone up in %s at %s", e.SetupTime.Round(1e6), e.URL)
	for name, u := range e.Users {
		if u.ID == "" || u.ProjectID == "" {
			t.Fatalf("user %s: %+v", name, u)
		}
	}
	tok := e.Token(t, "member-a")
	if !e.Validate(t, tok) {
		t.Fatal("a fresh token does not validate")
	}
	e.Revoke(t, tok)
	if e.Validate(t, tok) {
		t.Fatal("a revoked token still validates")
	}
	// AddUser: a new user in a new project gets a token scoped to it, and a
	// second user joins the same project.
	u := e.AddUser(t, "extra-1", "extra", "member")
	v := e.AddUser(t, "extra-2", "extra", "reader")
	if u.ProjectID == "" || u.ProjectID != v.ProjectID || u.ProjectID == e.Users["member-a"].ProjectID {
		t.Fatalf("AddUser: %+v %+v", u, v)
	}
	if !e.Validate(t, e.Token(t, "extra-1")) {
		t.Fatal("the added user's token does not validate")
	}
}
