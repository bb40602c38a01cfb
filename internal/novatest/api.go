package novatest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/servicetest"
	"github.com/ingot-dev/ingot/internal/testproc"
)

// Microversion is the compute API version the helpers send (2.37 and up
// take networks "none").
const Microversion = "2.90"

// Do sends method path (under URL) with token at Microversion, decoding a
// 2xx JSON answer into out when not nil; anything else fails the test.
func (e *Env) Do(t testing.TB, token, method, path string, body, out any) {
	t.Helper()
	if err := e.call(token, method, path, body, out); err != nil {
		t.Fatalf("novatest: %v", err)
	}
}

func (e *Env) call(token, method, path string, body, out any) error {
	return testproc.CallWith(e.hc, token, method, e.URL+path, body, out,
		map[string]string{"OpenStack-API-Version": "compute " + Microversion})
}

// CreateFlavor creates a public flavor for Ironic nodes of resourceClass
// (e.g. "baremetal"): resources:CUSTOM_<CLASS>=1 and no VCPU, RAM or
// disk from Placement, as Nova's Ironic driver wants. It returns its id.
func (e *Env) CreateFlavor(t testing.TB, name, resourceClass string, ram, vcpus, disk int) string {
	t.Helper()
	admin := e.Keystone.Token(t, "admin")
	var f struct {
		Flavor struct{ ID string } `json:"flavor"`
	}
	e.Do(t, admin, "POST", "/flavors", map[string]any{"flavor": map[string]any{
		"name": name, "ram": ram, "vcpus": vcpus, "disk": disk}}, &f)
	e.Do(t, admin, "POST", "/flavors/"+f.Flavor.ID+"/os-extra_specs", map[string]any{"extra_specs": map[string]string{
		"resources:CUSTOM_" + customName(resourceClass): "1",
		"resources:VCPU": "0", "resources:MEMORY_MB": "0", "resources:DISK_GB": "0"}}, nil)
	return f.Flavor.ID
}

// customName is Placement's spelling of an Ironic resource class.
func customName(rc string) string {
	b := []byte(rc)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'):
		default:
			b[i] = '_'
		}
	}
	return string(b)
}

// WaitCapacity waits until Placement offers n resource providers (Ironic
// nodes) with capacity for one resourceClass instance: nova-compute
// reports nodes at its resource updates, the scheduler maps the host
// within its discovery interval (run here at once), and a node's inventory
// is reserved until Ironic shows its power state.
func (e *Env) WaitCapacity(t testing.TB, resourceClass string, n int, timeout time.Duration) {
	t.Helper()
	admin := e.Keystone.Token(t, "admin")
	url := e.PlacementURL + "/resource_providers?resources=CUSTOM_" + customName(resourceClass) + ":1"
	deadline := time.Now().Add(timeout)
	for {
		var rps struct {
			Providers []struct {
				UUID string `json:"uuid"`
			} `json:"resource_providers"`
		}
		err := testproc.CallWith(e.hc, admin, "GET", url, nil, &rps, map[string]string{"OpenStack-API-Version": "placement 1.4"})
		if err == nil && len(rps.Providers) >= n {
			// The scheduler maps new hosts to cell1 only every few seconds.
			if err := servicetest.Exec(e.Dir, nil, append(slices.Clone(e.manage), "cell_v2", "discover_hosts")...); err != nil {
				t.Fatalf("novatest: %v", err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("novatest: %d nodes with %s capacity after %s (want %d; last error %v)\n%s",
				len(rps.Providers), resourceClass, timeout, n, err, e.LogTail(20))
		}
		time.Sleep(time.Second)
	}
}

// Server is what the helpers read of a Nova server.
type Server struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Node   string `json:"OS-EXT-SRV-ATTR:hypervisor_hostname"`
	Fault  *struct {
		Message string `json:"message"`
	} `json:"fault"`
}

// Boot creates a server as token (networks "none" unless body names them;
// body's members override the defaults) and waits until it is ACTIVE.
func (e *Env) Boot(t testing.TB, token string, body map[string]any, timeout time.Duration) Server {
	t.Helper()
	req := map[string]any{"networks": "none"}
	for k, v := range body {
		req[k] = v
	}
	var created struct {
		Server struct{ ID string } `json:"server"`
	}
	e.Do(t, token, "POST", "/servers", map[string]any{"server": req}, &created)
	return e.WaitStatus(t, token, created.Server.ID, "ACTIVE", timeout)
}

// Show is the server as token sees it (the node is shown to admins only).
func (e *Env) Show(t testing.TB, token, id string) Server {
	t.Helper()
	var got struct {
		Server Server `json:"server"`
	}
	e.Do(t, token, "GET", "/servers/"+id, nil, &got)
	return got.Server
}

// WaitStatus waits until the server shows status (ERROR fails the test
// unless it is the status waited for).
func (e *Env) WaitStatus(t testing.TB, token, id, status string, timeout time.Duration) Server {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var got struct {
			Server Server `json:"server"`
		}
		err := e.call(token, "GET", "/servers/"+id, nil, &got)
		s := got.Server
		if err == nil && s.Status == status {
			return s
		}
		if err == nil && s.Status == "ERROR" {
			t.Fatalf("novatest: server %s went ERROR: %s\n%s", id, faultOf(s), e.LogTail(30))
		}
		if time.Now().After(deadline) {
			t.Fatalf("novatest: server %s is %q after %s, not %s (last error %v)\n%s", id, s.Status, timeout, status, err, e.LogTail(30))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func faultOf(s Server) string {
	if s.Fault == nil {
		return "(no fault)"
	}
	return fmt.Sprint(s.Fault.Message)
}

// RetireCompute does what an operator does before ingot adopts Nova's
// servers: disables the nova-compute service, stops it, and waits until
// Nova shows it down.
func (e *Env) RetireCompute(t testing.TB, timeout time.Duration) {
	t.Helper()
	admin := e.Keystone.Token(t, "admin")
	id := e.computeService(t, admin).ID
	e.Do(t, admin, "PUT", "/os-services/"+id, map[string]any{"status": "disabled", "disabled_reason": "moving to ingot"}, nil)
	e.compute.Stop()
	deadline := time.Now().Add(timeout)
	for {
		s := e.computeService(t, admin)
		if s.State == "down" && s.Status == "disabled" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("novatest: nova-compute is %s and %s after %s", s.Status, s.State, timeout)
		}
		time.Sleep(time.Second)
	}
}

type service struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	State  string `json:"state"`
}

func (e *Env) computeService(t testing.TB, admin string) service {
	t.Helper()
	var got struct {
		Services []service `json:"services"`
	}
	e.Do(t, admin, "GET", "/os-services?binary=nova-compute&host="+Host, nil, &got)
	if len(got.Services) != 1 {
		t.Fatalf("novatest: %d nova-compute services on %s", len(got.Services), Host)
	}
	return got.Services[0]
}
