package keystonetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"

	"github.com/ingot-dev/ingot/internal/testproc"

	_ "modernc.org/sqlite" // driver "sqlite", to switch Keystone's file to WAL and move its endpoints

	"github.com/ingot-dev/ingot/internal/poll"
)

// confTmpl is a configuration that works on the 2-core machines, with two
// speed-ups measured there: an in-process memory cache (a token call took
// 0.5-0.9 s without it, 20 ms with it; with the one worker process the
// cache is coherent, and a revoked token is refused at once), and cheap
// password hashes (bcrypt's default 12 rounds cost ~0.3 s per token).
var confTmpl = template.Must(template.New("keystone.conf").Parse(`# Written by ingot's internal/keystonetest.
[DEFAULT]
log_dir = {{.Dir}}
log_file = keystone.log

[database]
connection = sqlite:///{{.Dir}}/keystone.db

[token]
provider = fernet
expiration = {{.Expiration}}

[fernet_tokens]
key_repository = {{.Dir}}/fernet

[fernet_receipts]
key_repository = {{.Dir}}/fernet

[credential]
key_repository = {{.Dir}}/cred

[cache]
enabled = true
backend = dogpile.cache.memory

[identity]
password_hash_rounds = 4
`))

// proc is one uwsgi serving Keystone.
type proc struct {
	dir, log, url string
	cmd           *exec.Cmd
	done          chan struct{}
}

const (
	startTimeout = 60 * time.Second
	termGrace    = 5 * time.Second
)

func writeConf(dir string, expiration int) error {
	var b bytes.Buffer
	if err := confTmpl.Execute(&b, map[string]any{"Dir": dir, "Expiration": expiration}); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "keystone.conf"), b.Bytes(), 0o600)
}

// cleanEnv runs Debian's Python with nothing of the caller's Python setup.
func cleanEnv(dir string) []string {
	return []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8",
		"OS_KEYSTONE_CONFIG_DIR=" + dir, "OS_KEYSTONE_CONFIG_FILES=keystone.conf"}
}

// manage runs keystone-manage in dir.
func manage(dir string, args ...string) error {
	cmd := exec.Command(manageBin, append([]string{"--config-file", filepath.Join(dir, "keystone.conf")}, args...)...)
	cmd.Dir, cmd.Env = dir, cleanEnv(dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("keystone-manage %s: %v\n%s", args[0], err, out)
	}
	return nil
}

// writeKeys makes a key repository as fernet_setup does: key 0 (staged)
// and 1 (primary), each 32 random bytes in URL-safe base64.
func writeKeys(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, name := range []string{"0", "1"} {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(base64.URLEncoding.EncodeToString(k)), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// sqliteExec runs statements on Keystone's database file (not while
// Keystone writes it: before a start, or after a stop).
func sqliteExec(path string, stmts ...string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// start runs uwsgi on a free port (three tries) and waits for GET /v3;
// before is called with the URL first (the catalog is moved there).
func start(dir string, before func(url string) error) (*proc, error) {
	var last error
	for range 3 {
		port, err := testproc.FreePort()
		if err != nil {
			return nil, err
		}
		p := &proc{dir: dir, log: filepath.Join(dir, "uwsgi.log"), url: fmt.Sprintf("http://127.0.0.1:%d/v3", port)}
		if before != nil {
			if err := before(p.url); err != nil {
				return nil, err
			}
		}
		if last = p.run(port); last == nil {
			return p, nil
		}
	}
	return nil, last
}

func (p *proc) run(port int) error {
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(uwsgiBin, "--plugin", "python3", "--http-socket", "127.0.0.1:"+strconv.Itoa(port),
		"--wsgi-file", wsgiFile, "--master", "--die-on-term", "--no-orphans", "--processes", "1",
		"--lazy-apps", "--add-header", "Connection: close", "--buffer-size", "65535", "--chdir", p.dir)
	cmd.Dir, cmd.Env = p.dir, cleanEnv(p.dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start uwsgi: %w", err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(p.done) }()
	hc := &http.Client{Timeout: time.Second}
	err = poll.Wait(context.Background(), startTimeout, func() (bool, string, error) {
		if testproc.Exited(p.done) {
			return false, "", errors.New("uwsgi exited while starting")
		}
		resp, err := hc.Get(p.url)
		if err != nil {
			return false, err.Error(), nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status, nil
	})
	if err != nil {
		p.stop()
		return fmt.Errorf("keystone on %s: %w; last lines of %s:\n%s", p.url, err, p.log, testproc.Tail(p.log, 20))
	}
	return nil
}

// stop: SIGTERM to the group (uwsgi --die-on-term), SIGKILL after termGrace.
func (p *proc) stop() {
	if p.cmd == nil {
		return
	}
	testproc.StopGroup(p.cmd.Process.Pid, p.done, termGrace)
}

func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		if strings.HasSuffix(path, ".log") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
}

var errNoManifest = errors.New("no manifest")
