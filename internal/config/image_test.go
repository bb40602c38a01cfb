package config

import (
	"strings"
	"testing"
)

// TestImageBackend: embedded by default (serve --dev unchanged), glance
// only behind Keystone, with Glance's catalog endpoint defaulting to
// auth.keystone's region and interface.
func TestImageBackend(t *testing.T) {
	c, err := Parse(nil)
	if err != nil || c.Image.Backend != ImageEmbedded {
		t.Fatalf("default backend %q, %v; want embedded", c.Image.Backend, err)
	}
	if d := Dev(t.TempDir()); d.Normalize() != nil || d.Image.Backend != ImageEmbedded {
		t.Fatalf("--dev backend %q, want embedded", d.Image.Backend)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"image: {backend: glance}", "glance needs Keystone"},
		{"image: {backend: swift}", "want embedded or glance"},
		{"auth: {strategy: keystone, keystone: {auth_url: \"http://k:5000/v3\", username: ingot, password: p, project_name: service}}\nimage: {backend: glance, timeout: -1s}", "image.timeout"},
	} {
		if _, err := Parse([]byte(tt.yaml)); err == nil || !strings.Contains(err.Error(), "image.") ||
			!strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want image.…%s", tt.yaml, err, tt.want)
		}
	}
	c, err = Parse([]byte(`auth:
  strategy: keystone
  keystone: {auth_url: "http://k:5000/v3", username: ingot, password: p, project_name: service, region: RegionTwo, interface: internal}
image: {backend: glance}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Image.Backend != ImageGlance || c.Image.Region != "RegionTwo" || c.Image.Interface != "internal" {
		t.Errorf("image %+v: want glance in RegionTwo, internal", c.Image)
	}
}
