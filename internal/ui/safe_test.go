package ui_test

import (
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/safetext"
)

// TestUntrustedTextVisible: a name and metadata with bidi controls show
// as escapes on every page that shows them (a U+202E cannot reorder the
// row after it), and the power state shows under Nova's name.
func TestUntrustedTextVisible(t *testing.T) {
	e := start(t, nil)
	id := e.create("", "evil\u202egnp.exe")
	e.waitStatus("", id, "ACTIVE")
	if code := e.api("", "POST", "/v2.1/servers/"+id+"/metadata",
		map[string]any{"metadata": map[string]string{"owner": "\u2066\u200fteam"}}, nil); code != 200 {
		t.Fatalf("metadata: %d", code)
	}
	u := e.user()
	for _, c := range []struct {
		path string
		want []string
	}{
		{"/ui/servers/" + id, []string{`<bdi>evil\u202egnp.exe</bdi>`, `owner=\u2066\u200fteam`, `<dd id="server-power">RUNNING</dd>`}},
		{"/ui/servers", []string{`evil\u202egnp.exe`}},
		{"/ui/servers/" + id + "/delete", []string{`<strong><bdi>evil\u202egnp.exe</bdi></strong>`}},
	} {
		p := u.get(c.path)
		if p.status != 200 {
			t.Errorf("%s: %d", c.path, p.status)
			continue
		}
		if strings.ContainsFunc(p.body, func(r rune) bool { return safetext.Acts(r) && r != '\n' && r != '\t' && r != '\r' }) {
			t.Errorf("%s holds a control or bidi character raw:\n%.3000s", c.path, p.body)
		}
		for _, w := range c.want {
			if !strings.Contains(p.body, w) {
				t.Errorf("%s lacks %s:\n%.3000s", c.path, w, p.body)
			}
		}
	}
}
