package identity

import (
	"net/http"
	"testing"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
)

// TestIronicBehindKeystone: a real Ironic with auth_strategy = keystone
// (keystonemiddleware, validating against the real Keystone) refuses
// anonymous calls; ingot, with ironic.auth: keystone and ironic.url:
// catalog, finds Ironic in the catalog, authenticates with its service
// credentials and builds a server to ACTIVE, then deletes it.
func TestIronicBehindKeystone(t *testing.T) {
	ks := keystonetest.Start(t)
	ir := ironictest.StartReal(t, ironictest.RealOptions{Keystone: &ironictest.Keystone{
		AuthURL: ks.URL, Username: "ingot", Password: keystonetest.Password, ProjectName: "service"}})
	if r := ir.Request(t, "GET", "/v1/nodes", nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("anonymous GET /v1/nodes on a keystone Ironic: %d %s", r.Status, r.Body)
	}
	ir.AuthToken = ks.Token(t, "ingot")
	ir.EnrollNode(t, ironictest.NodeSpec{Name: "k1", ResourceClass: "baremetal", Kind: ironictest.Fast})
	ks.RegisterService(t, "baremetal", "ironic", ir.URL)

	s := startStack(t, ks, func(c *config.Config) {
		c.Ironic.URL, c.Ironic.Auth = "catalog", "keystone"
	})
	id, _ := s.createServer("member-a", "on-real-ironic", nil)
	s.waitActive("member-a", id)
	var nodes struct {
		Nodes []struct {
			Name     string  `json:"name"`
			ServerID *string `json:"server_id"`
		} `json:"nodes"`
	}
	s.must("admin", "GET", "/ingot/v1/nodes", nil, 200).decode(t, &nodes)
	if len(nodes.Nodes) != 1 || nodes.Nodes[0].ServerID == nil || *nodes.Nodes[0].ServerID != id {
		t.Fatalf("nodes through keystone Ironic: %+v", nodes.Nodes)
	}
	s.must("member-a", "DELETE", "/v2.1/servers/"+id, nil, 204)
}
