package terraform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The provider this suite runs, from the Go module proxy.
const (
	providerModule  = "github.com/terraform-provider-openstack/terraform-provider-openstack/v3"
	providerVersion = "v3.4.0"
	providerSource  = "terraform-provider-openstack/openstack"
	providerBinary  = "terraform-provider-openstack"
)

// providerDir is the directory holding the provider's binary: built with
// `go install` into the user's cache directory the first time (about 90 s),
// reused afterwards.
func providerDir(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("cache dir: %v", err)
	}
	dir := filepath.Join(cache, "ingot", "terraform-provider-openstack", providerVersion)
	if _, err := os.Stat(filepath.Join(dir, providerBinary)); err == nil {
		return dir
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go on PATH to build the provider: %v", err)
	}
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Built into a fresh directory, renamed into place whole: a build
	// stopped half-way leaves nothing that looks finished.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, goBin, "install", providerModule+"@"+providerVersion)
	cmd.Dir = tmp // outside ingot's module
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install %s@%s: %v\n%s", providerModule, providerVersion, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) {
		t.Fatalf("provider into the cache: %v", err)
	}
	t.Logf("built %s %s in %s", providerSource, providerVersion, time.Since(begin).Round(time.Second))
	return dir
}

// tf runs terraform in one work directory with a CLI config whose
// dev_overrides point at the provider (so no `terraform init`, which asks
// the registry) and a member's clouds.yaml.
type tf struct {
	t   *testing.T
	dir string
	env []string
	n   int // commands run, for the log file names
	// lastLog is the TF_LOG file of the last command run.
	lastLog string
}

func newTF(t *testing.T, provider, dir, cloudsYAML string) *tf {
	t.Helper()
	cli := filepath.Join(dir, "terraformrc")
	rc := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  direct {}\n}\n", providerSource, provider)
	clouds := filepath.Join(dir, "clouds.yaml")
	for path, body := range map[string]string{cli: rc, clouds: cloudsYAML} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TF_CLI_CONFIG_FILE=" + cli,
		"TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1", "TF_LOG=DEBUG",
		"OS_CLIENT_CONFIG_FILE=" + clouds, "OS_CLOUD=member"}
	return &tf{t: t, dir: dir, env: env}
}

// write replaces the configuration (main.tf) of the work directory.
func (f *tf) write(hcl string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, "main.tf"), []byte(hcl), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

// run runs one terraform command and returns its exit code and how long it
// took; TF_LOG's output goes to a file of its own, named in a failure.
func (f *tf) run(args ...string) (int, string, time.Duration) {
	f.t.Helper()
	f.n++
	logFile := filepath.Join(f.dir, fmt.Sprintf("%02d-%s.log", f.n, args[0]))
	f.lastLog = logFile
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "terraform", append(args, "-no-color")...)
	cmd.Dir = f.dir
	cmd.Env = append(f.env, "TF_LOG_PATH="+logFile)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	begin := time.Now()
	err := cmd.Run()
	took := time.Since(begin)
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		f.t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
	}
	return code, fmt.Sprintf("%s\n(debug log: %s)", out.String(), logFile), took
}

// must runs a command that must exit 0 and logs how long it took.
func (f *tf) must(args ...string) time.Duration {
	f.t.Helper()
	code, out, took := f.run(args...)
	if code != 0 {
		f.t.Fatalf("terraform %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	f.t.Logf("terraform %s: %s", strings.Join(args, " "), took.Round(10*time.Millisecond))
	return took
}

// noChanges is a second plan after an apply: -detailed-exitcode must say
// 0 (no changes), not 2 (a diff, e.g. an attribute read back differently).
func (f *tf) noChanges() {
	f.t.Helper()
	code, out, took := f.run("plan", "-detailed-exitcode", "-input=false")
	if code != 0 {
		f.t.Errorf("second plan: exit %d, want 0 (no changes)\n%s", code, out)
	}
	f.t.Logf("terraform plan -detailed-exitcode: %s", took.Round(10*time.Millisecond))
}
