package tempest

import (
	"os"
	"strings"
	"testing"
)

// TestConfigReasons: every feature tempest.conf.tmpl turns off carries its
// reason: each block of settings (lines between blank lines) with a
// "= false" in it starts with a comment.
func TestConfigReasons(t *testing.T) {
	raw, err := os.ReadFile("tempest.conf.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	commented, disabled := false, 0
	for n, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "["):
			commented = false
		case strings.HasPrefix(line, "#"):
			commented = true
		case strings.HasSuffix(line, "= false") || strings.HasSuffix(line, "=") || strings.HasSuffix(line, "= 0"):
			disabled++
			if !commented {
				t.Errorf("tempest.conf.tmpl:%d: %q turns something off without a comment saying why", n+1, line)
			}
		}
	}
	if disabled < 20 {
		t.Errorf("only %d settings turned off: did the template change?", disabled)
	}
}
