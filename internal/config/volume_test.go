package config

import (
	"strings"
	"testing"
)

func TestVolumeBackend(t *testing.T) {
	c, err := Parse(nil)
	if err != nil || c.Volume.Backend != VolumeEmbedded || c.UsesCinder() {
		t.Fatalf("default backend %q (%v)", c.Volume.Backend, err)
	}
	for _, tc := range []struct{ yaml, key string }{
		{"volume: {backend: lvm}", "volume.backend"},
		{"volume: {backend: cinder}", "needs auth.strategy: keystone"},
		{"volume: {cinder: {url: ftp://x}}", "volume.cinder.url"},
	} {
		if _, err := Parse([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: error %v, want one naming %s", tc.yaml, err, tc.key)
		}
	}
	ks := "auth: {strategy: keystone, keystone: {auth_url: http://ks:5000/v3, username: ingot, password: p, project_name: service}}\n"
	c, err = Parse([]byte(ks + "volume: {backend: cinder, cinder: {url: catalog}}"))
	if err != nil || !c.UsesCinder() || c.Volume.Cinder.URL != "" || c.Volume.Cinder.Timeout <= 0 {
		t.Fatalf("cinder from the catalog: %+v, %v", c.Volume, err)
	}
}
