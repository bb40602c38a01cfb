package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command group refuses a misspelt subcommand: an error naming it,
// with cobra's suggestion, and no help on stdout (main exits 1 on it).
func TestUnknownSubcommandFails(t *testing.T) {
	var groups []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasSubCommands() {
			groups = append(groups, c)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	if len(groups) < 6 {
		t.Fatalf("found %d command groups", len(groups))
	}
	for _, g := range groups {
		path := strings.Fields(g.CommandPath())[1:]
		first := g.Commands()[0].Name()
		typo := first[:len(first)-1] // "creat" for "create"
		root := newRootCmd()
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs(append(path, typo, "x"))
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), `unknown command "`+typo+`" for "`+g.CommandPath()+`"`) {
			t.Errorf("%s %s x: err %v, want unknown command", g.CommandPath(), typo, err)
			continue
		}
		if len(typo) > 2 && !strings.Contains(err.Error(), "Did you mean this?\n\t"+first) {
			t.Errorf("%s %s: no suggestion of %s in %q", g.CommandPath(), typo, first, err)
		}
		if out.Len() != 0 {
			t.Errorf("%s %s printed %q", g.CommandPath(), typo, out.String())
		}
	}
	// A group alone still prints its help and succeeds.
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"server"})
	if err := root.Execute(); err != nil || !strings.Contains(out.String(), "Available Commands") {
		t.Errorf("ingot server: %v\n%s", err, out.String())
	}
}

func TestVersionText(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.4.1-0.20261201220000-abcdef012345+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abcdef0123456789"},
			{Key: "vcs.time", Value: "2026-12-01T22:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		override string
		info     *debug.BuildInfo
		want     string
	}{
		{"", info, "ingot v0.4.1-0.20261201220000-abcdef012345+dirty, commit abcdef0123456789 (modified), committed 2026-12-01T22:00:00Z, go1.26.8"},
		{"v0.5.0", info, "ingot v0.5.0, commit abcdef0123456789 (modified), committed 2026-12-01T22:00:00Z, go1.26.8"},
		{"", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "ingot (devel), go1.26.8"},
		{"", nil, "ingot (unknown)"},
	} {
		if got := versionText(c.override, c.info); got != c.want {
			t.Errorf("versionText(%q) = %q, want %q", c.override, got, c.want)
		}
	}
}

// The binary built for a release carries its tag.
func TestVersionLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "ingot")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v0.9.1", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ingot v0.9.1, ") {
		t.Errorf("ingot version: %v: %q", err, out)
	}
	out, err = exec.Command(bin, "server", "creat", "x").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `unknown command "creat" for "ingot server"`) {
		t.Errorf("ingot server creat x: %v: %q", err, out)
	}
}
