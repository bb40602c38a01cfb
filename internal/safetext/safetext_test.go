package safetext

import (
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"web-01", "web-01"},
		{"café ünïcode 日本 🚀 👨‍👩‍👧", "café ünïcode 日本 🚀 👨‍👩‍👧"}, // the ZWJ of the family stays
		{"a\x00b", `a\x00b`},
		{"line1\nline2", `line1\nline2`},
		{"col\tumn", `col\tumn`},
		{"cr\rlf", `cr\rlf`},
		{"\x1b[2J\x1b]0;pwned\x07", `\x1b[2J\x1b]0;pwned\x07`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085\u009b31m", `c1\u0085\u009b31m`},
		{"evil\u202egnp.exe", `evil\u202egnp.exe`},
		{"\u202a\u202b\u202c\u202d", `\u202a\u202b\u202c\u202d`},
		{"\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`},
		{"\u200e\u200f\u061c", `\u200e\u200f\u061c`},
		{"sep\u2028\u2029", `sep\u2028\u2029`},
		{`C:\dir`, `C:\\dir`},
		{`looks\x1blike`, `looks\\x1blike`}, // a literal "\x1b" cannot pass for an ESC
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
	} {
		got := Escape(c.in)
		if got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		for _, r := range got {
			if Acts(r) {
				t.Errorf("Escape(%q) still holds %U", c.in, r)
			}
		}
		if !utf8.ValidString(got) {
			t.Errorf("Escape(%q) = %q is not UTF-8", c.in, got)
		}
	}
}

// Every rune that acts is escaped, whichever it is.
func TestEscapeEveryControl(t *testing.T) {
	for r := rune(0); r <= 0x10ffff; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		if !Acts(r) {
			continue
		}
		if got := Escape(string(r)); got == string(r) || len(got) < 2 || got[0] != '\\' {
			t.Errorf("Escape(%U) = %q", r, got)
		}
	}
}

func TestVisible(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<td>web\t01</td>\n", "<td>web\t01</td>\n"},
		{`C:\dir` + "\r\n", `C:\dir` + "\r\n"},
		{"<td>evil\u202egnp.exe</td>", `<td>evil\u202egnp.exe</td>`},
		{"\x1b[31m\x00\u0085\u2066\u2028\xff", `\x1b[31m\x00\u0085\u2066\u2028\xff`},
	} {
		if got := Visible(c.in); got != c.want {
			t.Errorf("Visible(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
