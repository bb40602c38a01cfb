package identity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ingot-dev/ingot/internal/config"
)

// TestPolicyFile: auth.policy_file overrides rules of the built-in policy
// (here: readers may create servers, nobody lists nodes) and keeps the others.
func TestPolicyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(`
"os_compute_api:servers:create": "rule:project_reader_or_admin"
"ingot:nodes:index": "!"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startStack(t, nil, func(c *config.Config) { c.Auth.PolicyFile = path })
	s.createServer("reader-a", "by-a-reader", nil)
	s.must("admin", "GET", "/ingot/v1/nodes", nil, 403)
	id, _ := s.createServer("member-a", "m", nil)
	s.must("reader-a", "DELETE", "/v2.1/servers/"+id, nil, 403) // delete keeps its default
	// A broken policy file stops ingot at start.
	if err := os.WriteFile(path, []byte(`"x": "rule:missing"`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _ := config.Parse([]byte(baseConfig))
	cfg.Database, cfg.Auth.PolicyFile = filepath.Join(t.TempDir(), "db"), path
	if _, err := newApp(t, cfg); err == nil {
		t.Fatal("a policy referring to a missing rule was accepted")
	}
}
