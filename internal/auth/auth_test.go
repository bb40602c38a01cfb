package auth

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
)

func TestNoAuth(t *testing.T) {
	n := NoAuth{ProjectID: "ingot", UserID: "ingot", Roles: []string{"admin", "member", "reader"}}
	h := http.Header{}
	id, err := n.Authenticate(context.Background(), h)
	if err != nil || id.ProjectID != "ingot" || id.UserID != "ingot" || !id.HasRole("ADMIN") {
		t.Fatalf("defaults: %+v %v", id, err)
	}
	h.Set("X-Auth-Project-Id", "p1")
	h.Set("X-Auth-User-Id", "u1")
	h.Add("X-Roles", "reader, member")
	h.Add("X-Roles", "custom")
	id, err = n.Authenticate(context.Background(), h)
	if err != nil || id.ProjectID != "p1" || id.UserID != "u1" || !slices.Equal(id.Roles, []string{"reader", "member", "custom"}) || id.HasRole("admin") {
		t.Fatalf("headers: %+v %v", id, err)
	}
	h.Set("X-Roles", "")
	if id, _ := n.Authenticate(context.Background(), h); len(id.Roles) != 0 {
		t.Fatalf("an empty X-Roles is no role, got %v", id.Roles)
	}
	for _, bad := range []string{"a b", "x\n", "../etc", string(make([]byte, 65))} {
		h := http.Header{"X-Auth-Project-Id": {bad}}
		if _, err := n.Authenticate(context.Background(), h); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("project %q: %v", bad, err)
		}
	}
}
