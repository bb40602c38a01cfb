package notifications

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/apitest"
	"github.com/ingot-dev/ingot/internal/ingottest"
	"github.com/ingot-dev/ingot/internal/ironictest"
	"github.com/ingot-dev/ingot/internal/novanotify"
	"github.com/ingot-dev/ingot/internal/poll"
)

// lifeTypes are the action notifications of one build and delete, in order.
var lifeTypes = []string{novanotify.CreateStart, novanotify.CreateEnd, novanotify.DeleteStart, novanotify.DeleteEnd}

// actions are notes' event types without instance.update.
func actions(notes []Note) []string {
	var out []string
	for _, n := range notes {
		if n.EventType != novanotify.Update {
			out = append(out, n.EventType)
		}
	}
	return out
}

// distinct keeps the first of each message_id (consumers dedupe on it).
func distinct(notes []Note) []Note {
	seen := map[string]bool{}
	var out []Note
	for _, n := range notes {
		if !seen[n.MessageID] {
			seen[n.MessageID] = true
			out = append(out, n)
		}
	}
	return out
}

// buildAndDelete creates a server, waits for ACTIVE, deletes it and waits
// until it is gone.
func buildAndDelete(t *testing.T, d *dev, p *ingottest.Proc, name string) (string, apitest.Server) {
	t.Helper()
	c := apitest.New(t, p.API)
	id := d.create(c, name)
	s := c.WaitStatus(id, "ACTIVE", waitLong)
	c.Delete(id)
	c.WaitGone(id, waitLong)
	return id, s
}

// TestOsloListenerGetsCreateAndDelete: an oslo.messaging notification
// listener subscribed to versioned_notifications on the nova exchange
// receives a build's and a delete's notifications with Nova's event types,
// objects and payload members, once each.
func TestOsloListenerGetsCreateAndDelete(t *testing.T) {
	bus := ironictest.NewBus(t)
	l := listen(t, bus)
	d := newDev(t, bus)
	p := d.launch().Serving()
	id, active := buildAndDelete(t, d, p, "billing-1")
	got := l.waitFor(t, id, novanotify.DeleteEnd)
	t.Logf("%d notifications for one build and delete: %v", len(got), types(got))

	if a := actions(got); !slices.Equal(a, lifeTypes) {
		t.Errorf("action notifications %v, want %v (each once, in order)", a, lifeTypes)
	}
	if n := len(byType(got, novanotify.Update)); n < 2 {
		t.Errorf("%d instance.update, want at least the state changes of the build and the delete", n)
	}
	if len(distinct(got)) != len(got) {
		t.Errorf("a message_id repeats without a crash: %v", got)
	}
	node := ""
	if active.Node != nil {
		node = *active.Node
	}
	want := map[string]struct {
		object, state, priority string
	}{
		novanotify.CreateStart: {"InstanceCreatePayload", "building", "INFO"},
		novanotify.CreateEnd:   {"InstanceCreatePayload", "active", "INFO"},
		novanotify.DeleteStart: {"InstanceActionPayload", "active", "INFO"},
		novanotify.DeleteEnd:   {"InstanceActionPayload", "deleted", "INFO"},
		novanotify.Update:      {"InstanceUpdatePayload", "", "INFO"},
	}
	for _, n := range got {
		w := want[n.EventType]
		data := n.Payload.Data
		if n.PublisherID != "nova-compute:notify-test" || n.Priority != w.priority || n.Payload.Name != w.object ||
			n.Payload.Namespace != "nova" || n.MessageID == "" {
			t.Errorf("%s: publisher %q priority %s object %s.%s, want nova-compute:notify-test, %s, nova.%s",
				n.EventType, n.PublisherID, n.Priority, n.Payload.Namespace, n.Payload.Name, w.priority, w.object)
		}
		if w.state != "" && data["state"] != w.state {
			t.Errorf("%s: state %v, want %s", n.EventType, data["state"], w.state)
		}
		for _, k := range []string{"uuid", "tenant_id", "user_id", "host", "node", "flavor", "image_uuid", "state",
			"power_state", "task_state", "created_at", "launched_at", "terminated_at", "display_name"} {
			if _, ok := data[k]; !ok {
				t.Errorf("%s: payload lacks %s", n.EventType, k)
			}
		}
		if data["tenant_id"] == "" || data["display_name"] != "billing-1" || data["image_uuid"] != d.imageID {
			t.Errorf("%s: tenant %v name %v image %v", n.EventType, data["tenant_id"], data["display_name"], data["image_uuid"])
		}
	}
	end := byType(got, novanotify.CreateEnd)[0].Payload.Data
	fl, _ := end["flavor"].(map[string]any)
	fd, _ := fl["nova_object.data"].(map[string]any)
	if end["launched_at"] == nil || end["power_state"] != "running" || end["task_state"] != nil ||
		end["node"] != node || end["host"] != "notify-test" || fd["name"] != "bm.small" {
		t.Errorf("create.end: launched_at %v power %v task %v node %v (want %s) host %v flavor %v", end["launched_at"],
			end["power_state"], end["task_state"], end["node"], node, end["host"], fd)
	}
	if gone := byType(got, novanotify.DeleteEnd)[0].Payload.Data; gone["terminated_at"] == nil || gone["deleted_at"] == nil {
		t.Errorf("delete.end: terminated_at %v deleted_at %v", gone["terminated_at"], gone["deleted_at"])
	}
	if v := metric(t, p, "ingot_notifications_published_total"); v < float64(len(got)) {
		t.Errorf("ingot_notifications_published_total %v, want >= %d", v, len(got))
	}
}

// TestBusDownDuringCreate: while the broker refuses ingot, a build and a
// delete go on and their notifications wait in the outbox (the metric and
// a warning say so); once the bus is back every one is delivered, none
// lost and none twice.
func TestBusDownDuringCreate(t *testing.T) {
	bus := ironictest.NewBus(t)
	deny(t, bus)
	d := newDev(t, bus)
	p := d.launch().Serving()
	id, _ := buildAndDelete(t, d, p, "outage-1")
	poll.Until(t, waitLong, "publish errors counted", func() (bool, string) {
		v := metric(t, p, "ingot_notifications_publish_errors_total")
		return v > 0, fmt.Sprintf("errors %v", v)
	})
	// The gauge is set at each attempt to publish, and the first may come
	// before the delete wrote its notices: the next attempt, after the
	// backoff, shows every one waiting.
	var waiting float64
	poll.Until(t, waitLong, "the outbox gauge showing every notice waiting", func() (bool, string) {
		waiting = metric(t, p, "ingot_notifications_outbox")
		return waiting >= float64(len(lifeTypes)), fmt.Sprintf("ingot_notifications_outbox %v, want >= %d", waiting, len(lifeTypes))
	})
	if b, _ := os.ReadFile(p.Log); !strings.Contains(string(b), "cannot publish") {
		t.Error("no warning that notifications cannot be published")
	}

	allow(t, bus)
	l := listen(t, bus)
	got := l.waitFor(t, id, novanotify.DeleteEnd)
	if a := actions(got); !slices.Equal(a, lifeTypes) {
		t.Errorf("after the outage: %v, want %v", a, lifeTypes)
	}
	if len(distinct(got)) != len(got) {
		t.Errorf("delivered twice without a crash: %v", types(got))
	}
	poll.Until(t, waitLong, "outbox drained", func() (bool, string) {
		v := metric(t, p, "ingot_notifications_outbox")
		return v == 0, fmt.Sprintf("outbox %v", v)
	})
	t.Logf("%v notifications waited out the outage; %d delivered after it", waiting, len(got))
}

// TestOsloListenerGetsDay2: stop, start, reboot and rebuild each send
// Nova's .start and .end, in order, with the server's state in each.
func TestOsloListenerGetsDay2(t *testing.T) {
	bus := ironictest.NewBus(t)
	l := listen(t, bus)
	d := newDev(t, bus)
	p := d.launch().Serving()
	c := apitest.New(t, p.API)
	id := d.create(c, "day2-1")
	c.WaitStatus(id, "ACTIVE", waitLong)
	for _, op := range []struct {
		body any
		want string
	}{
		{map[string]any{"os-stop": nil}, "SHUTOFF"},
		{map[string]any{"os-start": nil}, "ACTIVE"},
		{map[string]any{"reboot": map[string]any{"type": "SOFT"}}, "ACTIVE"},
		{map[string]any{"rebuild": map[string]any{"imageRef": d.imageID}}, "ACTIVE"},
	} {
		if code := c.Call("POST", "/v2.1/servers/"+id+"/action", op.body, nil); code != 202 {
			t.Fatalf("%v: %d", op.body, code)
		}
		// The status shows the operation's end only once it is recorded.
		c.WaitFor(fmt.Sprintf("%v done", op.body), waitLong, func() bool {
			s, _ := c.Get(id)
			return s.Status == op.want && s.TaskState == nil
		})
	}
	got := l.waitFor(t, id, novanotify.RebuildEnd)
	want := []string{novanotify.CreateStart, novanotify.CreateEnd, novanotify.PowerOffStart, novanotify.PowerOffEnd,
		novanotify.PowerOnStart, novanotify.PowerOnEnd, novanotify.RebootStart, novanotify.RebootEnd,
		novanotify.RebuildStart, novanotify.RebuildEnd}
	if a := actions(got); !slices.Equal(a, want) {
		t.Errorf("actions %v, want %v", a, want)
	}
	for _, c := range []struct{ et, state, power, object string }{
		{novanotify.PowerOffEnd, "stopped", "shutdown", "InstanceActionPayload"},
		{novanotify.PowerOnEnd, "active", "running", "InstanceActionPayload"},
		{novanotify.RebuildStart, "active", "running", "InstanceActionRebuildPayload"},
		{novanotify.RebuildEnd, "active", "running", "InstanceActionRebuildPayload"},
	} {
		n := byType(got, c.et)
		if len(n) != 1 || n[0].Payload.Data["state"] != c.state || n[0].Payload.Data["power_state"] != c.power ||
			n[0].Payload.Name != c.object {
			t.Errorf("%s: %+v, want state %s power %s object %s", c.et, n, c.state, c.power, c.object)
		}
	}
	t.Logf("%d notifications for a build, stop, start, reboot and rebuild", len(got))
}
