package tempest

import (
	"testing"

	"github.com/ingot-dev/ingot/internal/glancetest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/neutrontest"
)

// startCloud starts neutron-server and glance-api behind ks with what
// Tempest's configuration names: the shared network "private" with its
// subnet, and two public images; it returns the images' ids.
func startCloud(t *testing.T, ks *keystonetest.Env) (image, imageAlt string) {
	t.Helper()
	n := neutrontest.Start(t, ks)
	private := n.CreateNetwork(t, neutrontest.NetworkOptions{Name: network, Shared: true})
	n.CreateSubnet(t, neutrontest.SubnetOptions{NetworkID: private.ID, CIDR: "10.20.0.0/22", Gateway: "10.20.0.1"})
	g := glancetest.Start(t, ks)
	image = g.UploadImage(t, "admin", glancetest.ImageOptions{Name: "debian-12", Visibility: "public"})
	imageAlt = g.UploadImage(t, "admin", glancetest.ImageOptions{Name: "ubuntu-24.04", Visibility: "public"})
	return image, imageAlt
}
