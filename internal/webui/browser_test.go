package webui

import (
	"context"
	"encoding/base64"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// debianChromium is where Debian's chromium package installs the browser.
const debianChromium = "/usr/bin/chromium"

// actionTimeout bounds everything one tab does.
const actionTimeout = 60 * time.Second

// chromiumPath returns the browser binary. Without one the test is skipped,
// or fails when HERALD_REQUIRE_BROWSER=1.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat(debianChromium); err == nil && !fi.IsDir() {
		return debianChromium
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("HERALD_REQUIRE_BROWSER") == "1" {
		t.Fatalf("chromium not found at %s or in PATH and HERALD_REQUIRE_BROWSER=1: install it (apt-get install -y chromium)", debianChromium)
	}
	t.Skip("chromium not installed; skipping the web UI browser test (apt-get install chromium, or set HERALD_REQUIRE_BROWSER=1 to fail instead)")
	return ""
}

// startBrowser launches a headless chromium with a fresh profile and returns
// a chromedp context holding it; the browser is stopped at test cleanup.
//
// Every host name resolves to nothing except 127.0.0.1 and evilHost (also
// 127.0.0.1: another site for the cross-site tests), so the web fonts the
// asynqmon page links to are never fetched and nothing leaves the machine.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("host-resolver-rules", "MAP "+evilHost+" 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.WindowSize(1440, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	// The first run starts the process; it must not carry a timeout, which
	// would end the browser with it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// tab is one browser tab and the network requests it made.
type tab struct {
	t   *testing.T
	ctx context.Context // bounded by actionTimeout

	mu       sync.Mutex
	external []string // URLs of non-loopback responses
}

// openTab opens a tab in browser. With auth set, every request of the tab
// carries the admin token as basic auth (loginTab answers the browser's
// real login prompt instead). At cleanup the tab is closed and the test
// fails if any response came from a host other than 127.0.0.1.
func openTab(t *testing.T, browser context.Context, auth bool) *tab {
	return openTabAs(t, browser, map[bool]string{true: adminToken}[auth])
}

// openTabAs opens a tab whose requests carry token as the basic-auth
// password; "" sends none.
func openTabAs(t *testing.T, browser context.Context, token string) *tab {
	t.Helper()
	tctx, closeTab := chromedp.NewContext(browser)
	tb := &tab{t: t}
	if err := chromedp.Listen(tctx, tb.watch); err != nil {
		closeTab()
		t.Fatalf("open tab: %v", err)
	}
	ctx, cancel := context.WithTimeout(tctx, actionTimeout)
	tb.ctx = ctx
	t.Cleanup(func() {
		cancel()
		closeTab()
		tb.mu.Lock()
		defer tb.mu.Unlock()
		if len(tb.external) > 0 {
			t.Errorf("the page loaded resources from outside the machine: %v", tb.external)
		}
	})
	if token != "" {
		cred := base64.StdEncoding.EncodeToString([]byte("herald:" + token))
		if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders,
			network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": "Basic " + cred}}); err != nil {
			t.Fatalf("set the Authorization header: %v", err)
		}
	}
	return tb
}

// watch records responses that did not come from the loopback address. It
// runs on the tab's reader goroutine, so it only appends.
func (tb *tab) watch(ev any) {
	e, ok := ev.(*network.EventResponseReceived)
	if !ok || e.Response == nil {
		return
	}
	u, err := url.Parse(e.Response.URL)
	if err != nil || u.Scheme == "data" || u.Hostname() == "127.0.0.1" || u.Hostname() == evilHost {
		return
	}
	tb.mu.Lock()
	tb.external = append(tb.external, e.Response.URL)
	tb.mu.Unlock()
}

// navigate loads url and returns the HTTP status of the document.
func (tb *tab) navigate(url string) int64 {
	tb.t.Helper()
	resp, err := chromedp.Run(tb.ctx, chromedp.NavigateResponse(url))
	if err != nil {
		tb.t.Fatalf("navigate to %s: %v", url, err)
	}
	return resp.Status
}

// text returns the rendered text of the page.
func (tb *tab) text() string {
	tb.t.Helper()
	s, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		tb.t.Fatalf("read the page text: %v", err)
	}
	return s
}

// html returns the page's whole DOM as HTML.
func (tb *tab) html() string {
	tb.t.Helper()
	s, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil {
		tb.t.Fatalf("read the page HTML: %v", err)
	}
	return s
}

// waitText waits until the rendered page contains every string of want, and
// fails the test with the page text when it does not within the timeout.
func (tb *tab) waitText(want ...string) {
	tb.t.Helper()
	args := make([]any, len(want))
	for i, w := range want {
		args[i] = w
	}
	_, err := chromedp.Run(tb.ctx, chromedp.PollFunction[bool](
		`(...want) => !!document.body && want.every(w => document.body.innerText.includes(w))`,
		chromedp.WithPollingArgs(args...),
		chromedp.WithPollingInterval(100*time.Millisecond),
		chromedp.WithPollingTimeout(30*time.Second),
	))
	if err != nil {
		tb.t.Fatalf("page never showed %q: %v\n--- page text ---\n%s", want, err, tb.textOrNote())
	}
}

// textOrNote is text for failure messages: it never fails itself.
func (tb *tab) textOrNote() string {
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return "(page text unavailable: " + err.Error() + ")"
	}
	return s
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v\n--- page text ---\n%s", expr, err, tb.textOrNote())
	}
	return v
}

// screenshot returns a PNG of the whole page.
func (tb *tab) screenshot() []byte {
	tb.t.Helper()
	png, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Fatalf("screenshot: %v", err)
	}
	return png
}

// mustNotContain fails when s holds secret, naming where.
func mustNotContain(t *testing.T, where, s, secret string) {
	t.Helper()
	if strings.Contains(s, secret) {
		t.Errorf("%s contains the secret %q", where, secret)
	}
}
