package tempest

import (
	"testing"

	"github.com/ingot-dev/ingot/internal/cindertest"
	"github.com/ingot-dev/ingot/internal/glancetest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/neutrontest"
)

// startCloud starts neutron-server, glance-api and, withCinder, Cinder
// (cinder-api, -scheduler, -volume with internal/cindertest's fake iSCSI driver) behind
// ks with what Tempest's configuration names: the shared network "private"
// with its subnet, and two public images; it returns the images' ids.
// Cinder's block-storage and volumev3 endpoints go into ks's catalog, where
// ingot (volume.backend: cinder) and Tempest's volume client find them.
func startCloud(t *testing.T, ks *keystonetest.Env, withCinder bool) (image, imageAlt string) {
	t.Helper()
	n := neutrontest.Start(t, ks)
	private := n.CreateNetwork(t, neutrontest.NetworkOptions{Name: network, Shared: true})
	n.CreateSubnet(t, neutrontest.SubnetOptions{NetworkID: private.ID, CIDR: "10.20.0.0/22", Gateway: "10.20.0.1"})
	g := glancetest.Start(t, ks)
	image = g.UploadImage(t, "admin", glancetest.ImageOptions{Name: "debian-12", Visibility: "public"})
	imageAlt = g.UploadImage(t, "admin", glancetest.ImageOptions{Name: "ubuntu-24.04", Visibility: "public"})
	if !withCinder {
		return image, imageAlt
	}
	c := cindertest.StartWith(t, ks)
	t.Logf("Cinder started in %s (db sync %s, until the pool %s)", c.SetupTime.Round(100e6), c.SyncTime.Round(100e6), c.ReadyTime.Round(100e6))
	return image, imageAlt
}
