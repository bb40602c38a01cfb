package tempest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExpectedList: the repository's list parses, and every entry has a
// reason; an entry without one is an error.
func TestExpectedList(t *testing.T) {
	for _, list := range []string{"expected-failures.txt", "cloud-expected-failures.txt"} {
		got, err := readExpected(list)
		if err != nil {
			t.Fatal(err)
		}
		for id, reason := range got {
			if !strings.HasPrefix(id, "tempest.api.compute.") || reason == "" {
				t.Errorf("%s: entry %q: %q", list, id, reason)
			}
		}
	}
	bad := filepath.Join(t.TempDir(), "list")
	if err := os.WriteFile(bad, []byte("# c\ntempest.api.compute.x.Y.test_z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readExpected(bad); err == nil || !strings.Contains(err.Error(), "no reason") {
		t.Errorf("an entry without a reason: %v", err)
	}
}

// TestSummarize: counts, ids without their attributes, failures listed
// as expected do not fail, listed tests that passed are reported, and the
// cause of a failure names the client call and the error.
func TestSummarize(t *testing.T) {
	notFound := `Traceback (most recent call last):
  File "/usr/lib/python3/dist-packages/tempest/lib/services/compute/hypervisor_client.py", line 51, in list_hypervisors
    resp, body = self.get(url)
  File "/usr/lib/python3/dist-packages/tempest/lib/common/rest_client.py", line 826, in _error_checker
    raise exceptions.NotFound(resp_body, resp=resp)
tempest.lib.exceptions.NotFound: Object not found
Details: {'code': 404, 'message': 'The resource could not be found.'}
`
	schema := `Traceback (most recent call last):
  File "/usr/lib/python3/dist-packages/tempest/lib/services/compute/servers_client.py", line 103, in create_server
    self.validate_response(schema, resp, body)
jsonschema.exceptions.ValidationError: 'adminPass' is a required property

Failed validating 'required' in schema['properties']['server']:
`
	rs := []result{
		{ID: "tempest.api.compute.a.A.test_ok[id-1,smoke]", Status: "success"},
		{ID: "tempest.api.compute.a.A.test_fixed[id-2]", Status: "success"},
		{ID: "tempest.api.compute.a.A.test_skip[id-3]", Status: "skip", Reason: "Resize not available."},
		{ID: "tempest.api.compute.a.A.test_listed[id-4]", Status: "fail", Reason: notFound},
		{ID: "setUpClass (tempest.api.compute.b.B)", Status: "fail", Reason: schema},
	}
	expected := map[string]string{"tempest.api.compute.a.A.test_listed": "r", "tempest.api.compute.a.A.test_fixed": "r"}
	r := summarize(rs, expected)
	if r.passed != 2 || r.failed != 2 || r.expectedFailed != 1 || r.skipped != 1 {
		t.Fatalf("counts %+v", r)
	}
	if len(r.unexpected) != 1 || r.unexpected[0].ID != "setUpClass (tempest.api.compute.b.B)" {
		t.Errorf("unexpected %v", r.unexpected)
	}
	if len(r.fixed) != 1 || r.fixed[0] != "tempest.api.compute.a.A.test_fixed" {
		t.Errorf("fixed %v", r.fixed)
	}
	want := map[string]string{
		"tempest.api.compute.a.A.test_listed":  "hypervisor_client.list_hypervisors: tempest.lib.exceptions.NotFound: Object not found Details: {'code': 404",
		"setUpClass (tempest.api.compute.b.B)": "servers_client.create_server: schema: 'adminPass' is a required property (Failed validating 'required' in schema['properties']['server']:)",
	}
	for c, ids := range r.byCause {
		for _, id := range ids {
			if !strings.HasPrefix(c, want[id]) {
				t.Errorf("cause of %s: %q, want %q…", id, c, want[id])
			}
		}
	}
	if txt := r.text(); !strings.Contains(txt, "passed 2, failed 2 (expected 1), skipped 1") || !strings.Contains(txt, "Resize not available.") {
		t.Errorf("summary:\n%s", txt)
	}
}
