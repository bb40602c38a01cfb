package servicecatalog

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ingot-dev/ingot/internal/keystonetest"
)

// TestCatalog: the service user finds an endpoint by type, region and
// interface; a missing one and bad credentials are typed; WithToken sends
// the user's token to the same endpoint.
func TestCatalog(t *testing.T) {
	ks := keystonetest.Start(t)
	var seen string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/" { // gophercloud's version discovery, as Neutron answers it
			_, _ = w.Write([]byte(`{"versions": [{"id": "v2.0", "status": "CURRENT"}]}`))
			return
		}
		seen = r.Header.Get("X-Auth-Token")
		_, _ = w.Write([]byte(`{"networks": []}`))
	}))
	t.Cleanup(srv.Close)
	ks.RegisterService(t, "network", "neutron", srv.URL)
	ctx := context.Background()
	creds := Credentials{AuthURL: ks.URL, Username: "ingot", Password: keystonetest.Password, ProjectName: "service"}
	pc, err := Authenticate(ctx, creds)
	if err != nil {
		t.Fatal(err)
	}
	for _, iface := range []string{"", "internal", "admin"} {
		sc, err := Network(pc, Endpoint{Region: "RegionOne", Interface: iface})
		if err != nil {
			t.Fatalf("interface %q: %v", iface, err)
		}
		if sc.ResourceBase != srv.URL+"/v2.0/" {
			t.Fatalf("resource base %s", sc.ResourceBase)
		}
	}
	if _, err := Network(pc, Endpoint{Region: "RegionTwo"}); !errors.Is(err, ErrNoEndpoint) {
		t.Errorf("other region: %v, want ErrNoEndpoint", err)
	}
	if _, err := Image(pc, Endpoint{}); !errors.Is(err, ErrNoEndpoint) {
		t.Errorf("no image service: %v, want ErrNoEndpoint", err)
	}
	if _, err := Network(pc, Endpoint{Interface: "private"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad interface: %v, want ErrInvalid", err)
	}
	if u, err := URL(pc, Endpoint{}, "identity"); err != nil || u == "" {
		t.Errorf("identity URL %q: %v", u, err)
	}
	bad := creds
	bad.Password = "wrong"
	if _, err := Authenticate(ctx, bad); !errors.Is(err, ErrAuth) {
		t.Errorf("bad password: %v, want ErrAuth", err)
	}

	sc, _ := Network(pc, Endpoint{})
	user := ks.Token(t, "member-a")
	u := WithToken(sc, user)
	if _, err := u.Get(ctx, u.ServiceURL("networks"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if seen != user {
		t.Errorf("WithToken sent %q, want the user's token", seen)
	}
	if _, err := sc.Get(ctx, sc.ServiceURL("networks"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if seen != pc.Token() || seen == user {
		t.Errorf("the service client sent %q, want its own token", seen)
	}
}
