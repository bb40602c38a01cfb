package servicetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// Setup is what every service behind Keystone starts from.
type Setup struct {
	// Dir is the service's own directory (removed when the test ends).
	Dir string
	// Port and URL: where it will listen, already in the catalog.
	Port int
	URL  string
	// User is its service user (project service; admin, service).
	User string
	// Authtoken is its [keystone_authtoken] section.
	Authtoken string
}

// Prepare makes dir and subdirs, picks a port, creates the service user
// (name-port) and registers the service of type typ at the URL in ks's
// catalog, before the service starts (services cache the catalog).
func Prepare(t testing.TB, ks *keystonetest.Env, typ, name string, subdirs ...string) Setup {
	t.Helper()
	return PrepareAt(t, ks, typ, name, "", subdirs...)
}

// PrepareAt is Prepare for a service whose catalog URL has a path under
// its root (Nova's /v2.1); Setup.URL stays the root.
func PrepareAt(t testing.TB, ks *keystonetest.Env, typ, name, path string, subdirs ...string) Setup {
	t.Helper()
	s := Setup{Dir: t.TempDir()}
	for _, d := range subdirs {
		if err := os.MkdirAll(filepath.Join(s.Dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	port, err := testproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s.Port, s.URL, s.User = port, fmt.Sprintf("http://127.0.0.1:%d", port), fmt.Sprintf("%s-%d", name, port)
	ks.AddUser(t, s.User, "service", "admin", "service")
	ks.RegisterService(t, typ, name, s.URL+path)
	auth := strings.TrimSuffix(ks.URL, "/v3")
	s.Authtoken = fmt.Sprintf(`[keystone_authtoken]
www_authenticate_uri = %s
auth_url = %s
auth_type = password
username = %s
password = %s
project_name = service
user_domain_name = Default
project_domain_name = Default
`, auth, auth, s.User, keystonetest.Password)
	return s
}
