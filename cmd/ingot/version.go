package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is set for tagged releases:
// go build -ldflags "-X main.version=v0.3.0" ./cmd/ingot. Empty otherwise,
// and the module version of the build info is shown.
var version string

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ingot's version, the commit it was built from and the Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			info, _ := debug.ReadBuildInfo() // nil in a binary built without module support
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionText(version, info))
			return err
		},
	}
}

// versionText is one line: the release (the -X override, else the module
// version), then the commit, its time and whether the tree was modified.
func versionText(override string, info *debug.BuildInfo) string {
	v := override
	if v == "" && info != nil {
		v = info.Main.Version
	}
	if v == "" {
		v = "(unknown)"
	}
	parts := []string{"ingot " + v}
	if info == nil {
		return parts[0]
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		if settings["vcs.modified"] == "true" {
			rev += " (modified)"
		}
		parts = append(parts, "commit "+rev)
	}
	if t := settings["vcs.time"]; t != "" {
		parts = append(parts, "committed "+t)
	}
	parts = append(parts, info.GoVersion)
	return strings.Join(parts, ", ")
}
