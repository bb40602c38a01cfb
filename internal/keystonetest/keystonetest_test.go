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
}
