package osc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// cliCase is one microversion of the CLI session. The microversions are
// those docs/clients.md reports: the CLI's default (2.1), the embedded
// flavor (2.47), the newest a user pins (2.90) and `2.latest`, which the CLI
// sends as 2.92.
type cliCase struct {
	mv    string
	tag   string // server name suffix
	wait  bool   // create the healthy server with the CLI's own --wait (5 s polls)
	net   bool   // pass --network (2.1 omits it: the networks member is then left out)
	cloud string // clouds.yaml entry instead of OS_AUTH_TYPE/OS_ENDPOINT
	delW  bool   // delete the healthy server with --wait
	// nicNone adds a server created with --nic none (2.37 and later).
	nicNone bool
}

var cliCases = []cliCase{
	{mv: "2.1", tag: "v2-1", wait: true},
	{mv: "2.47", tag: "v2-47", net: true, cloud: "bm-split"},
	{mv: "2.90", tag: "v2-90", net: true, nicNone: true},
	{mv: "2.latest", tag: "latest", net: true, wait: true, delW: true},
}

// TestOpenStackCLI is a real CLI session against the ingot binary at each
// microversion: for each, a healthy server and one whose nodes are deleted
// out-of-band while it deploys (every attempt), then list, list --long,
// show, event list/show, flavor list/show, delete; and, in parallel, the
// day-2 commands on one more server (day2_test.go).
func TestOpenStackCLI(t *testing.T) {
	requireCLI(t)
	start := time.Now()
	// Each microversion uses up to 3 nodes at once and deletes 2.
	s := startIngot(t, 4*3+4*2+1)
	s.holdAll(t)
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	deleted := s.drive(ctx, "bad-")
	t.Run("mv", func(t *testing.T) {
		for _, c := range cliCases {
			t.Run(c.mv, func(t *testing.T) {
				// In parallel: most of a session is Python starting and the
				// CLI's 5 s --wait polls, which overlap well.
				t.Parallel()
				runCLICase(t, s, c, deleted)
			})
		}
		t.Run("day-2", func(t *testing.T) {
			t.Parallel()
			runCLIDay2(t, s)
		})
	})
	t.Logf("CLI session at %d microversions: %s", len(cliCases), time.Since(start).Round(time.Second))
}

func runCLICase(t *testing.T, s *stack, c cliCase, deleted func() map[string][]string) {
	ctx := context.Background()
	cl := newCLI(t, s, c.mv, c.cloud)
	ok, bad, none := "ok-"+c.tag, "bad-"+c.tag, "none-"+c.tag
	create := "server create --flavor " + flavorName + " --image " + imageName + " -f json"
	okCreate := create
	if c.net {
		okCreate += " --network " + netName
	}
	if c.wait {
		okCreate += " --wait"
	}
	creates := []string{create + " --network " + netName + " " + bad, okCreate + " " + ok}
	if c.nicNone {
		creates = append(creates, create+" --nic none "+none)
	}
	docs, stderr, err := cl.session(ctx, len(creates), creates...)
	if err != nil {
		t.Fatalf("create session: %v\nstderr:\n%s", err, stderr)
	}
	wantOK := "BUILD"
	if c.wait {
		wantOK = "ACTIVE" // --wait returned: it saw active
	}
	expect(t, "create "+bad, asObject(t, docs[0]), map[string]any{"name": bad, "status": "BUILD"})
	expect(t, "create "+ok, asObject(t, docs[1]), map[string]any{"name": ok, "status": wantOK})

	mv := c.minor()
	okSv := s.waitStatus(t, ok, "ACTIVE")
	badSv := s.waitStatus(t, bad, "ERROR")
	if n := len(deleted()[bad]); n != 2 {
		t.Fatalf("%s: %d nodes deleted out-of-band, want 2 (one per attempt)", bad, n)
	}
	okReq, badReq := s.createRequestID(t, okSv.ID), s.createRequestID(t, badSv.ID)
	gone := []string{okSv.ID, badSv.ID}
	if c.nicNone {
		gone = append(gone, s.waitStatus(t, none, "ACTIVE").ID)
	}

	del := "server delete " + ok
	if c.delW {
		del = "server delete --wait " + ok
	}
	reads := []string{
		"server list -f json",
		"server list --long -f json",
		"server show " + ok + " -f json",
		"server show " + bad + " -f json",
		"server event list " + ok + " -f json",
		"server event show " + ok + " " + okReq + " -f json",
		"server event list --long " + bad + " -f json",
		"server event show " + bad + " " + badReq + " -f json",
		"flavor list -f json",
		"flavor show " + flavorName + " -f json",
		"server list --name ^" + ok + "$ -f json", // a regular expression, as in Nova
		"image list -f json",
		"network list -f json",
		"availability zone list --compute -f json",
	}
	deletes := []string{del, "server delete " + bad}
	if c.nicNone {
		deletes = append(deletes, "server delete "+none)
	}
	docs, stderr, err = cl.session(ctx, len(reads), append(reads, deletes...)...)
	if err != nil {
		t.Fatalf("read session: %v\nstderr:\n%s", err, stderr)
	}
	if strings.Contains(stderr, "rror") || strings.Contains(stderr, "Traceback") {
		t.Errorf("CLI stderr:\n%s", stderr)
	}
	rows := asList(t, docs[0])
	expect(t, "list "+ok, row(t, rows, ok), map[string]any{"ID": okSv.ID, "Status": "ACTIVE",
		"Image": imageName, "Flavor": flavorName, "Networks": "~" + netName})
	expect(t, "list "+bad, row(t, rows, bad), map[string]any{"ID": badSv.ID, "Status": "ERROR"})
	long := row(t, asList(t, docs[1]), ok)
	expect(t, "list --long "+ok, long, map[string]any{"Status": "ACTIVE", "Task State": nil, "Power State": 1.0,
		"Image Name": imageName, "Availability Zone": "nova", "Host": "ingot-osc", "Networks": "~" + netName})
	if mv < 47 {
		expect(t, "list --long "+ok, long, map[string]any{"Flavor Name": flavorName, "Flavor ID": flavorID})
	} else {
		// From 2.47 the server carries no flavor id: one Flavor column.
		expect(t, "list --long "+ok, long, map[string]any{"Flavor": flavorName})
	}

	show := asObject(t, docs[2])
	expect(t, "show "+ok, show, map[string]any{"id": okSv.ID, "status": "ACTIVE",
		"OS-EXT-STS:vm_state": "active", "OS-EXT-STS:task_state": nil, "OS-EXT-STS:power_state": 1.0,
		"OS-EXT-AZ:availability_zone": "nova", "OS-EXT-SRV-ATTR:host": "ingot-osc",
		"OS-EXT-SRV-ATTR:hypervisor_hostname": okSv.Node, "progress": 100.0,
		"image": "~" + imageName, "addresses": "~10.0.0.", "properties": map[string]any{}})
	for _, k := range []string{"created", "updated", "project_id", "user_id", "OS-SRV-USG:launched_at"} {
		if _, present := show[k]; !present {
			t.Errorf("show %s: no %q", ok, k)
		}
	}
	if mv < 47 {
		expect(t, "show flavor", show, map[string]any{"flavor": flavorName + " (" + flavorID + ")"})
	} else {
		expect(t, "show flavor", asObject(t, show["flavor"]), map[string]any{"original_name": flavorName,
			"vcpus": 8.0, "ram": 16384.0, "disk": 100.0, "extra_specs": "~resources:CUSTOM_BAREMETAL"})
	}
	if mv >= 3 {
		expect(t, "show "+ok, show, map[string]any{"OS-EXT-SRV-ATTR:reservation_id": "~r-"})
	}
	badShow := asObject(t, docs[3])
	expect(t, "show "+bad, badShow, map[string]any{"status": "ERROR", "OS-EXT-STS:vm_state": "error"})
	expect(t, "show "+bad+" fault", asObject(t, badShow["fault"]), map[string]any{"code": 500.0,
		"message": "~was deleted while deploying (attempt 2 of 2; no attempts left)",
		"details": "~attempt 1: node"})

	checkEvents(t, ok, okReq, asList(t, docs[4]), asObject(t, docs[5]), mv, false)
	checkEvents(t, bad, badReq, asList(t, docs[6]), asObject(t, docs[7]), mv, true)

	flavors := asList(t, docs[8])
	if len(flavors) != 1 {
		t.Errorf("flavor list: %v", flavors)
	} else {
		expect(t, "flavor list", flavors[0], map[string]any{"ID": flavorID, "Name": flavorName,
			"RAM": 16384.0, "Disk": 100.0, "VCPUs": 8.0, "Is Public": true})
	}
	expect(t, "flavor show", asObject(t, docs[9]), map[string]any{"id": flavorID, "name": flavorName,
		"properties": map[string]any{"resources:CUSTOM_BAREMETAL": "1", "resources:VCPU": "0",
			"resources:MEMORY_MB": "0", "resources:DISK_GB": "0"}})

	if named := asList(t, docs[10]); len(named) != 1 || named[0]["Name"] != ok {
		t.Errorf("server list --name ^%s$: %v, want only %s", ok, named, ok)
	}
	if c.nicNone {
		expect(t, "list "+none, row(t, rows, none), map[string]any{"Status": "ACTIVE", "Networks": map[string]any{}})
	}
	images, networks, zones := asList(t, docs[11]), asList(t, docs[12]), asList(t, docs[13])
	if len(images) != 1 || images[0]["Name"] != imageName || images[0]["Status"] != "active" {
		t.Errorf("image list: %v", images)
	}
	if len(networks) != 1 || networks[0]["Name"] != netName {
		t.Errorf("network list: %v", networks)
	}
	if len(zones) != 1 || zones[0]["Zone Name"] != "nova" || zones[0]["Zone Status"] != "available" {
		t.Errorf("availability zone list --compute: %v", zones)
	}

	if c.delW {
		// --wait returned, so the CLI saw the 404 already.
		code, err := s.call(ctx, "GET", s.url+"/v2.1/servers/"+okSv.ID, "2.1", nil, nil)
		if err != nil || code != 404 {
			t.Errorf("after delete --wait: %d %v", code, err)
		}
	}
	for _, id := range gone {
		s.waitGone(t, id)
	}
}

// checkEvents checks `server event list` and `server event show` of a
// server's create: one action, and for the failed build each attempt's
// compute__do_build_and_run_instance with its start, finish and Error result
// (and from 2.84 the reason in details).
func checkEvents(t *testing.T, name, req string, actions []map[string]any, detail map[string]any, mv int, failed bool) {
	t.Helper()
	if len(actions) != 1 {
		t.Fatalf("event list %s: %v, want one create", name, actions)
	}
	expect(t, "event list "+name, actions[0], map[string]any{"Request ID": req, "Action": "create"})
	if failed {
		expect(t, "event list "+name, actions[0], map[string]any{"Message": "Error"})
	}
	expect(t, "event show "+name, detail, map[string]any{"request_id": req, "action": "create"})
	events, _ := detail["events"].([]any)
	var builds []map[string]any
	for _, e := range events {
		m, _ := e.(map[string]any)
		if m["event"] == "compute__do_build_and_run_instance" {
			builds = append(builds, m)
		}
	}
	wantResult, wantBuilds := "Success", 1
	if failed {
		wantResult, wantBuilds = "Error", 2 // one per attempt (plus the final verdict)
	}
	if len(builds) < wantBuilds {
		t.Fatalf("event show %s: %d build events, want %d or more: %v", name, len(builds), wantBuilds, events)
	}
	for i, b := range builds[:wantBuilds] {
		want := map[string]any{"result": wantResult, "start_time": "~T", "finish_time": "~T"}
		if mv >= 84 && failed {
			want["details"] = "~node_deleted"
		}
		expect(t, fmt.Sprintf("event show %s build %d", name, i+1), b, want)
		if _, has := b["details"]; has != (mv >= 84) {
			t.Errorf("event show %s at 2.%d: details present %v: %v", name, mv, has, b)
		}
	}
}

func (c cliCase) minor() int {
	if c.mv == "2.latest" {
		return 92
	}
	var n int
	_, _ = fmt.Sscanf(c.mv, "2.%d", &n)
	return n
}

func asObject(t *testing.T, v any) map[string]any {
	t.Helper()
	if raw, ok := v.(json.RawMessage); ok {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("not a JSON object: %s", raw)
		}
		return m
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%T %v is not an object", v, v)
	}
	return m
}

func asList(t *testing.T, raw json.RawMessage) []map[string]any {
	t.Helper()
	var l []map[string]any
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatalf("not a JSON list of objects: %s", raw)
	}
	return l
}

// row is the list row of the named server.
func row(t *testing.T, rows []map[string]any, name string) map[string]any {
	t.Helper()
	for _, r := range rows {
		if r["Name"] == name {
			return r
		}
	}
	t.Fatalf("no row named %s in %v", name, rows)
	return nil
}

// expect checks fields of a CLI document: a want value "~x" means the field,
// printed as JSON, contains x; anything else must be equal (JSON numbers
// are float64, a missing field is not nil).
func expect(t *testing.T, what string, got map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		g, present := got[k]
		if !present {
			t.Errorf("%s: no field %q in %v", what, k, got)
			continue
		}
		if ws, ok := w.(string); ok && strings.HasPrefix(ws, "~") {
			b, _ := json.Marshal(g)
			if !strings.Contains(string(b), ws[1:]) {
				t.Errorf("%s: %s = %s, want it to contain %q", what, k, b, ws[1:])
			}
			continue
		}
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("%s: %s = %s, want %s", what, k, gb, wb)
		}
	}
}
