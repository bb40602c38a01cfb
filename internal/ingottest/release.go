package ingottest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// PreviousRelease is the release the upgrade tests start from: the tag and
// the commit it names (docs/releases.md). The commit is what is built, so a
// clone without tags still has it.
var PreviousRelease = Release{Tag: "v0.1.0", Commit: "bf7697c74510bb97ffa3d12caee9bd86ae70d91b"}

// Release is a tagged commit of this repository.
type Release struct{ Tag, Commit string }

// BinaryOf is cmd/ingot as release rel built it: its tree taken from this
// repository's history (git archive) into a temporary directory and built
// there with the module proxy's copies of its dependencies, once per test
// binary. A shallow clone without the commit skips the test; any other
// clone without it fails.
func BinaryOf(t testing.TB, rel Release) string {
	t.Helper()
	if err := exec.Command("git", "cat-file", "-e", rel.Commit+"^{commit}").Run(); err != nil {
		if out, _ := exec.Command("git", "rev-parse", "--is-shallow-repository").Output(); strings.TrimSpace(string(out)) == "true" {
			t.Skipf("ingottest: release %s (%s) is not in this shallow clone", rel.Tag, rel.Commit)
		}
		t.Fatalf("ingottest: release %s: commit %s is not in this repository's history", rel.Tag, rel.Commit)
	}
	return built(t, "release:"+rel.Commit, func(dir string) (string, error) { return buildRelease(dir, rel) })
}

func buildRelease(dir string, rel Release) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	src := filepath.Join(dir, "src-"+rel.Tag)
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	top, err := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("find the repository: %w", err)
	}
	// From a subdirectory git archive would take only that subtree.
	archive := exec.CommandContext(ctx, "git", "-C", strings.TrimSpace(string(top)), "archive", "--format=tar", rel.Commit)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	var stderr bytes.Buffer
	archive.Stderr, untar.Stdin, untar.Stderr = &stderr, pipe, &stderr
	if err := untar.Start(); err != nil {
		return "", fmt.Errorf("tar: %w", err)
	}
	if err := archive.Run(); err != nil {
		return "", fmt.Errorf("git archive %s: %w\n%s", rel.Commit, err, stderr.String())
	}
	if err := untar.Wait(); err != nil {
		return "", fmt.Errorf("tar: %w\n%s", err, stderr.String())
	}
	out := filepath.Join(dir, "ingot-"+rel.Tag)
	build := exec.CommandContext(ctx, "go", "build", "-race=false", "-buildvcs=false",
		"-ldflags", "-X main.version="+rel.Tag, "-o", out, "./cmd/ingot")
	build.Dir = src
	if msg, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build release %s (%s): %w\n%s", rel.Tag, rel.Commit, err, msg)
	}
	return out, os.RemoveAll(src)
}
