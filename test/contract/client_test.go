package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/poll"
)

// version is the microversion ingot pins; every call sends it unless a check
// asks for another one.
const version = "1.78"

// noVersion asks a call to send no microversion header at all.
const noVersion = ""

// resp is one raw HTTP answer.
type resp struct {
	call   string // "METHOD path @version", for messages
	status int
	header http.Header
	body   []byte
}

func (r *resp) String() string {
	b := string(r.body)
	if len(b) > 600 {
		b = b[:600] + "…"
	}
	return fmt.Sprintf("%s → %d %s", r.call, r.status, b)
}

// obj decodes the body as a JSON object or fails the check.
func (c *C) obj(r *resp) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		c.failf("%s: body is not a JSON object: %v", r, err)
	}
	return m
}

// send makes one call at the given microversion (noVersion: no header). A
// transport error fails the check.
func (c *C) send(ver, method, path string, body any) *resp {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.failf("marshal: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	target := path
	if !strings.HasPrefix(path, "http") {
		target = c.base + path
	}
	req, err := http.NewRequestWithContext(c.ctx, method, target, rd)
	if err != nil {
		c.failf("%s %s: %v", method, path, err)
	}
	if ver != noVersion {
		req.Header.Set("X-OpenStack-Ironic-API-Version", ver)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.failf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.failf("%s %s: read: %v", method, path, err)
	}
	call := method + " " + strings.TrimPrefix(target, c.base)
	if ver != version {
		call += " @" + map[bool]string{true: "no version", false: ver}[ver == noVersion]
	}
	return &resp{call: call, status: res.StatusCode, header: res.Header, body: b}
}

func (c *C) get(path string) *resp             { return c.send(version, "GET", path, nil) }
func (c *C) post(path string, body any) *resp  { return c.send(version, "POST", path, body) }
func (c *C) put(path string, body any) *resp   { return c.send(version, "PUT", path, body) }
func (c *C) patch(path string, body any) *resp { return c.send(version, "PATCH", path, body) }
func (c *C) del(path string) *resp             { return c.send(version, "DELETE", path, nil) }

// op is one JSON-patch operation.
func op(o, path string, value ...any) map[string]any {
	m := map[string]any{"op": o, "path": path}
	if len(value) > 0 {
		m["value"] = value[0]
	}
	return m
}

func ops(o ...map[string]any) []map[string]any { return o }

// status fails the check unless r has the status.
func (c *C) status(r *resp, want int) *resp {
	if r.status != want {
		c.failf("%s: want status %d", r, want)
	}
	return r
}

// fault is Ironic's error body: {"error_message": "<JSON string>"} holding
// {"faultcode", "faultstring", "debuginfo"} (docs/ironic.md §0).
func (c *C) fault(r *resp, status int, faultcode, faultstring string) {
	c.status(r, status)
	outer := c.obj(r)
	s, ok := outer["error_message"].(string)
	if !ok || len(outer) != 1 {
		c.failf("%s: want a body of exactly {\"error_message\": <JSON string>}", r)
	}
	var inner map[string]any
	if err := json.Unmarshal([]byte(s), &inner); err != nil {
		c.failf("%s: error_message is not double-encoded JSON: %v", r, err)
	}
	want := map[string]any{"faultcode": faultcode, "faultstring": faultstring, "debuginfo": nil}
	if !reflect.DeepEqual(inner, want) {
		c.failf("%s:\n  inner error %v\n  want        %v", r, inner, want)
	}
}

// clientFault is fault with faultcode "Client".
func (c *C) clientFault(r *resp, status int, faultstring string) {
	c.fault(r, status, "Client", faultstring)
}

// routingError is the inner {code, title, description} form Ironic uses for
// errors raised before a controller runs (unknown route, version negotiation).
func (c *C) routingError(r *resp, status int, title, description string) {
	c.status(r, status)
	outer := c.obj(r)
	s, ok := outer["error_message"].(string)
	if !ok || len(outer) != 1 {
		c.failf("%s: want a body of exactly {\"error_message\": <JSON string>}", r)
	}
	var inner map[string]any
	if err := json.Unmarshal([]byte(s), &inner); err != nil {
		c.failf("%s: error_message is not double-encoded JSON: %v", r, err)
	}
	want := map[string]any{"code": float64(status), "title": title, "description": description}
	if !reflect.DeepEqual(inner, want) {
		c.failf("%s:\n  inner error %v\n  want        %v", r, inner, want)
	}
}

// eq fails the check unless got equals want, compared as JSON values (so
// numbers are float64 and []string equals []any of strings).
func (c *C) eq(what string, got, want any) {
	if !reflect.DeepEqual(jsonValue(got), jsonValue(want)) {
		c.failf("%s: got %#v, want %#v", what, got, want)
	}
}

func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// keys returns the sorted keys of a JSON object.
func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// nodesOf decodes {"nodes": [...]} and returns the list and the next link.
func (c *C) nodesOf(r *resp) ([]map[string]any, string) {
	c.status(r, 200)
	var body struct {
		Nodes []map[string]any `json:"nodes"`
		Next  string           `json:"next"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil || body.Nodes == nil {
		c.failf("%s: want {\"nodes\": [...]}", r)
	}
	return body.Nodes, body.Next
}

// uuidsOf lists the "uuid" of each node.
func uuidsOf(nodes []map[string]any) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		s, _ := n["uuid"].(string)
		out = append(out, s)
	}
	return out
}

// sameSet fails unless got and want hold the same strings, in any order.
func (c *C) sameSet(what string, got, want []string) {
	g := append([]string(nil), got...)
	w := append([]string(nil), want...)
	sortStrings(g)
	sortStrings(w)
	if !reflect.DeepEqual(g, w) {
		c.failf("%s: got %v, want %v", what, got, want)
	}
}

// query returns the parsed query of a URL.
func (c *C) query(link string) url.Values {
	u, err := url.Parse(link)
	if err != nil {
		c.failf("bad link %q: %v", link, err)
	}
	return u.Query()
}

// eventually calls f, at most every interval, until it reports done or
// timeout passes; it returns whether f succeeded.
func eventually(timeout, interval time.Duration, f func() bool) bool {
	return poll.WaitPaced(context.Background(), timeout, interval, func() (bool, string, error) { return f(), "", nil }) == nil
}
