package configdrive

import (
	"strings"
	"unicode"
)

// maxHostname is Nova's limit (dnsmasq's, the lowest of Linux's 64,
// Windows' 255 and dnsmasq's 63).
const maxHostname = 63

// SanitizeHostname is Nova's sanitize_hostname (nova/utils.py): characters
// outside Latin-1 dropped, at most 63 characters, ' ', '_' and '.' become
// '-', other characters that are not letters, digits or '-' dropped, lower
// case, leading and trailing '-' trimmed. It may return "".
func SanitizeHostname(name string) string {
	rs := make([]rune, 0, len(name))
	for _, r := range name {
		if r <= 0xff {
			rs = append(rs, r)
		}
	}
	if len(rs) > maxHostname {
		rs = rs[:maxHostname]
	}
	var b strings.Builder
	for _, r := range rs {
		switch {
		case r == ' ' || r == '_' || r == '.' || r == '-':
			b.WriteByte('-')
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			// Python's \w over Latin-1: letters and numbers (é, ß, ², ½ stay).
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return strings.Trim(b.String(), ".-")
}

// DefaultHostname is the hostname Nova gives a server created without one:
// its sanitized name, or "Server-<uuid>" when nothing of the name is left.
func DefaultHostname(name, id string) string {
	if h := SanitizeHostname(name); h != "" {
		return h
	}
	return "Server-" + id
}
