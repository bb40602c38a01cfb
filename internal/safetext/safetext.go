// Package safetext renders untrusted text (names, tags, metadata, fault
// messages, anything a user or a node put into the API) so that it shows
// what it holds and does nothing else: an ESC cannot drive a terminal, a
// newline or tab cannot forge a table row or column, and a bidi control
// (U+202E …) cannot reorder the text around it.
package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that could act rather than show
// written as a Go-style escape: C0 and C1 controls and DEL (\t, \n, \r,
// else \x1b or \u0085), the line and paragraph separators (\u2028,
// \u2029), the bidi controls U+061C, U+200E/F, U+202A–E, U+2066–9
// (\u202e), bytes that are not UTF-8 (\xff), and the backslash itself
// (\\), so that an escape in the output always means the input had the
// character. For text a terminal shows: a table cell, a show field, a
// message. s is returned as is when nothing needs escaping.
func Escape(s string) string { return escape(s, false) }

// Visible escapes as Escape does but leaves tabs, newlines, carriage
// returns and backslashes alone: for markup whose own layout holds them
// and where they do no harm (an HTML page, once its own escaping is done).
func Visible(s string) string { return escape(s, true) }

func escape(s string, markup bool) string {
	if !needsEscape(s, markup) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case markup && layout(r):
			b.WriteRune(r)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && Acts(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case Acts(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Acts reports whether r acts instead of showing (a control, a line
// separator, a bidi control): what Escape and Visible never leave raw,
// the layout Visible keeps aside.
func Acts(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
}

// layout reports whether r is what Visible leaves to the markup.
func layout(r rune) bool { return r == '\t' || r == '\n' || r == '\r' || r == '\\' }

func needsEscape(s string, markup bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return true
		}
		if (r == '\\' || Acts(r)) && !(markup && layout(r)) {
			return true
		}
		i += size
	}
	return false
}
