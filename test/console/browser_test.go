package console

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/poll"
)

const chromiumPath = "/usr/bin/chromium"

// browser is one headless Chromium (Debian's) with a fresh profile.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	bytes    int64 // encoded bytes of finished loads since the last reset
	finished int
}

// newBrowser starts Chromium at 1280×800, or skips (fails with
// INGOT_TEST_IRONIC=1) when it is not installed.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if keystonetest.Wanted() {
			t.Fatalf("%s=1 but %s is missing (run .ci/install-chromium.sh)", keystonetest.EnvVar, chromiumPath)
		}
		t.Skipf("Chromium not installed (%s; run .ci/install-chromium.sh, or set %s=1 to make this a failure)", chromiumPath, keystonetest.EnvVar)
	}
	// As root and offline: no sandbox, nothing that phones home.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(bctx, 4*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("network: %v", err)
	}
	finished := chromedp.Events(ctx, network.LoadingFinished)
	go func() {
		for ev, err := range finished {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.bytes += int64(ev.EncodedDataLength)
			b.finished++
			b.mu.Unlock()
		}
	}()
	return b
}

// do runs actions, failing the test on error.
func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text %s: %v", sel, err)
	}
	return s
}

func eval[T any](b *browser, js string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitJS polls a JavaScript condition until it is true.
func (b *browser) waitJS(within time.Duration, what, js string) {
	b.t.Helper()
	poll.Until(b.t, within, what, func() (bool, string) {
		v, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
		if err != nil {
			return false, err.Error()
		}
		return v, "false"
	})
}

func (b *browser) location() string {
	b.t.Helper()
	u, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	return u
}

// weigh loads url with the cache off and returns the bytes transferred
// for it and its stylesheet and script (the encoded sizes Chromium counts).
func (b *browser) weigh(url string) (int64, int) {
	b.t.Helper()
	if _, err := chromedp.Call(b.ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		b.t.Fatal(err)
	}
	defer func() {
		_, _ = chromedp.Call(b.ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: false})
	}()
	b.mu.Lock()
	b.bytes, b.finished = 0, 0
	b.mu.Unlock()
	b.do(chromedp.Navigate(url))
	var n int64
	var f int
	poll.Until(b.t, 10*time.Second, "page, stylesheet and script loaded", func() (bool, string) {
		b.mu.Lock()
		n, f = b.bytes, b.finished
		b.mu.Unlock()
		return f >= 3, "finished loads: " + strconv.Itoa(f)
	})
	return n, f
}

// shot writes a full-page screenshot into the artifacts directory.
func (b *browser) shot(dir, name string) string {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s (%d bytes)", path, len(png))
	return path
}

// artifacts is where screenshots go: $INGOT_TEST_ARTIFACTS/console/<test>,
// else the test's temporary directory.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if root := os.Getenv("INGOT_TEST_ARTIFACTS"); root != "" {
		dir = filepath.Join(root, "console", filepath.Base(t.Name()))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
