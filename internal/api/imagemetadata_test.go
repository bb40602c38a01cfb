package api_test

import "testing"

// TestImageMetadataEmbedded: Nova's image metadata proxy over the
// configured images shows their properties and refuses to change them
// (403: they are configuration); from 2.39 the proxy is gone.
func TestImageMetadataEmbedded(t *testing.T) {
	f := newFixture(t)
	path := "/v2.1/images/" + imageID + "/metadata"
	if md := obj(t, f.do("GET", path, "2.35", nil).want(t, 200).body, "metadata"); len(md) != 1 || md["os_distro"] != "debian" {
		t.Errorf("metadata %v", md)
	}
	if m := obj(t, f.do("GET", path+"/os_distro", "2.38", nil).want(t, 200).body, "meta"); m["os_distro"] != "debian" {
		t.Errorf("meta %v", m)
	}
	f.do("GET", path+"/nope", "2.35", nil).novaError(t, 404, "itemNotFound")
	f.do("POST", path, "2.35", map[string]any{"metadata": map[string]string{"k": "v"}}).novaError(t, 403, "forbidden")
	f.do("PUT", path+"/k", "2.35", map[string]any{"meta": map[string]string{"k": "v"}}).novaError(t, 403, "forbidden")
	f.do("PUT", path+"/k", "2.35", map[string]any{"meta": map[string]string{"j": "v"}}).novaError(t, 400, "badRequest")
	f.do("DELETE", path+"/os_distro", "2.35", nil).novaError(t, 403, "forbidden")
	f.do("POST", path, "2.35", map[string]any{"metadata": "x"}).novaError(t, 400, "badRequest")
	f.do("GET", path, "2.39", nil).novaError(t, 404, "itemNotFound")
	f.do("GET", "/v2.1/images/00000000-0000-0000-0000-000000000000/metadata", "2.35", nil).novaError(t, 404, "itemNotFound")
}

// TestImageProxyAnnouncesItsMicroversion: Nova's image proxy answers a
// compute client with the microversion headers, as every compute route
// (Tempest's image client checks them); the CLI's Glance look-up, naming
// none, gets none.
func TestImageProxyAnnouncesItsMicroversion(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/v2.1/images", "/v2.1/images/" + imageID} {
		if got := f.do("GET", path, "2.1", nil).want(t, 200).header.Get("X-OpenStack-Nova-API-Version"); got != "2.1" {
			t.Errorf("GET %s at 2.1 answers microversion %q", path, got)
		}
		if got := f.do("GET", path, "", nil).want(t, 200).header.Get("X-OpenStack-Nova-API-Version"); got != "" {
			t.Errorf("GET %s as Glance answers microversion %q", path, got)
		}
	}
}

// TestImageProxyDelete: the proxy's DELETE (≤ 2.35) refuses the configured
// images (403), knows no others (404), and is gone from 2.36.
func TestImageProxyDelete(t *testing.T) {
	f := newFixture(t)
	f.do("DELETE", "/v2.1/images/"+imageID, "2.35", nil).novaError(t, 403, "forbidden")
	f.do("DELETE", "/v2.1/images/00000000-0000-0000-0000-000000000000", "2.35", nil).novaError(t, 404, "itemNotFound")
	f.do("DELETE", "/v2.1/images/"+imageID, "2.36", nil).novaError(t, 404, "itemNotFound")
}
