package webui

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/test/redistest"
)

// evilHost is another site: chromium resolves it to 127.0.0.1.
const evilHost = "evil.test"

// pendingStack is a Redis with one pending message in each queue, and a
// producer serving the web UI on it.
func pendingStack(t *testing.T) (*stack, string) {
	t.Helper()
	srv := redistest.Start(t)
	s := &stack{redis: srv, rdb: srv.Client(t), log: testLogger(t)}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	enq := app.NewEnqueuer(s.rdb, producerConfig(srv, false))
	for _, req := range pendingMessages {
		if _, err := enq.Enqueue(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	return s, s.serveProducer(t, false)
}

// prompt answers the browser's login prompt in a tab: the Fetch domain
// reports each authentication challenge the browser received and would
// show a prompt for (Fetch.authRequired), and answers it with the
// credentials, as a user typing them would. Challenges the browser does
// not understand raise no prompt and are not reported.
type prompt struct {
	mu         sync.Mutex
	challenges []string // "scheme realm"
}

func (p *prompt) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.challenges...)
}

// login enables the prompt answerer in tb, answering with password; with
// "" it cancels the prompt, as a user pressing Cancel.
func (tb *tab) login(password string) *prompt {
	tb.t.Helper()
	p := &prompt{}
	ctx := tb.ctx
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *fetch.EventRequestPaused:
			go func() {
				_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
			}()
		case *fetch.EventAuthRequired:
			p.mu.Lock()
			p.challenges = append(p.challenges, strings.ToLower(e.AuthChallenge.Scheme)+" "+e.AuthChallenge.Realm)
			p.mu.Unlock()
			go func() {
				answer := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}
				if password != "" {
					answer = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials,
						Username: "herald", Password: password}
				}
				_, _ = chromedp.Call(ctx, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: e.RequestID,
					AuthChallengeResponse: answer})
			}()
		}
	})
	if err != nil {
		tb.t.Fatalf("listen to the tab: %v", err)
	}
	handle := true
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &handle}); err != nil {
		tb.t.Fatalf("enable the Fetch domain: %v", err)
	}
	return p
}

// TestChromiumLogin logs in to the web UI the way a person does: the tab
// carries no credentials, the browser gets the 401 and raises its login
// prompt, which is answered with the token. This needs a Basic challenge
// the browser can parse: "Bearer ..., Basic ..." on one header line raised
// no prompt and showed the 401 page. The admin gets the read-write UI, a
// sender's API token the read-only one.
func TestChromiumLogin(t *testing.T) {
	s, base := pendingStack(t)
	_ = s
	for _, tc := range []struct {
		name, password string
		readOnly       bool
	}{
		{"admin token", adminToken, false},
		{"API token", apiToken, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			browser := startBrowser(t) // a fresh profile: no cached credentials
			tb := openTabAs(t, browser, "")
			p := tb.login(tc.password)
			if status := tb.navigate(base + "/monitoring/"); status != http.StatusOK {
				t.Fatalf("status %d after the login prompt, want 200 (challenges answered: %q)\n--- page text ---\n%s",
					status, p.seen(), tb.textOrNote())
			}
			got := p.seen()
			if len(got) == 0 || got[0] != `basic herald` {
				t.Fatalf("login prompts %q, want a Basic prompt for realm herald", got)
			}
			// The page's own API calls carry the cached credentials.
			tb.waitText("Queues", "critical", "default", "low")
			if ro := eval[bool](tb, `window.READ_ONLY === true`); ro != tc.readOnly {
				t.Errorf("READ_ONLY = %v, want %v for the %s", ro, tc.readOnly, tc.name)
			}
		})
	}
}

// TestCrossSiteFormRefused logs the admin in, then lets a page on another
// site submit a form to a mutating web UI endpoint in the same browser (a
// CSRF attempt riding on the cached credentials): the answer is a 403 and
// the queue stays unpaused. The same action from the UI's own page passes.
func TestCrossSiteFormRefused(t *testing.T) {
	s, base := pendingStack(t)
	browser := startBrowser(t)
	tb := openTabAs(t, browser, "")
	tb.login(adminToken)
	if status := tb.navigate(base + "/monitoring/"); status != http.StatusOK {
		t.Fatalf("login: status %d", status)
	}
	tb.waitText("Queues", "default")

	pauseURL := base + "/monitoring/api/queues/default:pause"
	evil := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>prize</title>
<form method="POST" action="%s" enctype="text/plain"><input name="x" value="y"></form>
<script>document.forms[0].submit()</script>`, pauseURL)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_ = evil.Listener.Close()
	evil.Listener = ln
	evil.Start()
	t.Cleanup(evil.Close)
	_, port, _ := net.SplitHostPort(ln.Addr().String())

	statuses := make(chan int64, 4)
	if err := chromedp.Listen(tb.ctx, func(ev any) {
		if e, ok := ev.(*network.EventResponseReceived); ok && e.Response != nil && strings.HasSuffix(e.Response.URL, ":pause") {
			select {
			case statuses <- e.Response.Status:
			default:
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	tb.navigate("http://" + evilHost + ":" + port + "/")
	select {
	case st := <-statuses:
		if st != http.StatusForbidden {
			t.Fatalf("the cross-site form POST was answered %d, want 403", st)
		}
	case <-tb.ctx.Done():
		t.Fatal("the cross-site form was never answered")
	}
	tb.waitText("cross_origin")
	insp := asynq.NewInspectorFromRedisClient(s.rdb)
	if info, err := insp.GetQueueInfo(jobs.QueueDefault); err != nil || info.Paused {
		t.Fatalf("after the cross-site POST: queue paused %v (%v), want not paused", info != nil && info.Paused, err)
	}

	// The UI's own page, with the same cached credentials, may pause.
	tb.navigate(base + "/monitoring/")
	tb.waitText("Queues")
	got, err := chromedp.Run(tb.ctx, chromedp.Evaluate[int](
		`fetch('/monitoring/api/queues/low:pause', {method: 'POST'}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("same-origin pause: %v", err)
	}
	if got >= 300 {
		t.Fatalf("same-origin pause by the admin: status %d", got)
	}
	if info, err := insp.GetQueueInfo(jobs.QueueLow); err != nil || !info.Paused {
		t.Fatalf("same-origin pause did not pause the queue (%v)", err)
	}
}
