package api_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
)

// The flavor's traits and capabilities and the hostname are resolved at
// create (the scheduler and the config drive read them from the record).
func TestCreateResolvesTraitsAndHostname(t *testing.T) {
	f := newFixture(t)
	body := validCreate()
	srv := body["server"].(map[string]any)
	srv["flavorRef"], srv["name"] = "2", "Web Server_01.example"
	id := obj(t, f.do("POST", "/v2.1/servers", "2.90", body).want(t, http.StatusAccepted).body, "server")["id"].(string)
	s, err := f.store.GetServer(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Spec.RequiredTraits, []string{"CUSTOM_GPU"}) || !slices.Equal(s.Spec.ForbiddenTraits, []string{"CUSTOM_SLOW"}) ||
		len(s.Spec.Capabilities) != 1 || s.Spec.Capabilities["boot_mode"] != "uefi" {
		t.Errorf("spec = %+v", s.Spec)
	}
	if s.Spec.Hostname != "web-server-01-example" {
		t.Errorf("hostname = %q, want Nova's sanitized name", s.Spec.Hostname)
	}
	got := obj(t, f.do("GET", "/v2.1/servers/"+id, "2.90", nil).want(t, 200).body, "server")
	if got["OS-EXT-SRV-ATTR:hostname"] != "web-server-01-example" {
		t.Errorf("OS-EXT-SRV-ATTR:hostname = %v", got["OS-EXT-SRV-ATTR:hostname"])
	}

	// A requested hostname is kept as given; a name with nothing usable gets Server-<uuid>.
	body = validCreate()
	body["server"].(map[string]any)["hostname"] = "given-host"
	id = obj(t, f.do("POST", "/v2.1/servers", "2.90", body).want(t, http.StatusAccepted).body, "server")["id"].(string)
	if s, _ := f.store.GetServer(context.Background(), id); s.Spec.Hostname != "given-host" {
		t.Errorf("requested hostname = %q", s.Spec.Hostname)
	}
	id = f.create("日本語")
	if s, _ := f.store.GetServer(context.Background(), id); s.Spec.Hostname != "Server-"+id {
		t.Errorf("hostname of an unusable name = %q", s.Spec.Hostname)
	}
}
