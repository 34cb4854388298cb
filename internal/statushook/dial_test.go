package statushook

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// receiver is a loopback test server counting the connections it gets.
func receiver(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// counting wraps a client's connect so that a test sees every attempt.
func counting(c *poster) *atomic.Int64 {
	var n atomic.Int64
	inner := c.dialer.dial
	c.dialer.dial = func(ctx context.Context, network, addr string, checked bool) (net.Conn, error) {
		n.Add(1)
		return inner(ctx, network, addr, checked)
	}
	return &n
}

func loopbackClient(t *testing.T, o posterOptions) *poster {
	t.Helper()
	c := newPoster(o)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func TestPostDeliversToAnAllowedLoopbackReceiver(t *testing.T) {
	var got http.Header
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.WriteHeader(http.StatusNoContent)
	})
	allow, _ := ParseAllowList([]string{"127.0.0.1/32"})
	c := loopbackClient(t, posterOptions{Policy: Policy{AllowHTTP: true, Allow: allow}})
	body := []byte(`{"type":"message.sent"}`)
	h, err := Headers("evt_1", time.Now(), body, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Post(context.Background(), srv.URL+"/hook", h, body)
	if err != nil || resp.Status != 204 || classify(resp.Status, err) != verdictDelivered {
		t.Fatalf("Post = %+v, %v", resp, err)
	}
	if err := Verify(testSecret, got, body, time.Now(), 0); err != nil {
		t.Fatalf("the receiver cannot verify what it got: %v", err)
	}
	if got.Get("Content-Type") != "application/json" {
		t.Fatalf("Content-Type = %q", got.Get("Content-Type"))
	}
}

func TestPostRefusesForbiddenAddressesWithoutConnecting(t *testing.T) {
	srv, conns := receiver(t, func(w http.ResponseWriter, _ *http.Request) {})
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	c := loopbackClient(t, posterOptions{Policy: Policy{AllowHTTP: true}})
	dials := counting(c)
	cases := []struct{ url, reason string }{
		{"http://127.0.0.1" + port + "/hook", "loopback"},
		{"http://[::1]" + port + "/hook", "loopback"},
		{"http://localhost" + port + "/hook", "localhost name"},
		{"http://169.254.169.254/latest/meta-data", "link-local"},
		{"http://10.0.0.1/hook", "private (RFC 1918)"},
	}
	for _, tc := range cases {
		_, err := c.Post(context.Background(), tc.url, nil, []byte("{}"))
		if !errors.Is(err, ErrForbiddenAddress) || !strings.Contains(err.Error(), tc.reason) ||
			!strings.Contains(err.Error(), "callback_url") {
			t.Errorf("Post(%s) = %v, want a callback_url error for a %s address", tc.url, err, tc.reason)
		}
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("%d connection attempts were made", n)
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the loopback receiver got %d connections", n)
	}
}

// A name that passes ValidateURL but resolves to a forbidden address when
// the client dials (DNS rebinding) is refused at dial time.
func TestDialTimeCheckRefusesRebinding(t *testing.T) {
	srv, conns := receiver(t, func(w http.ResponseWriter, _ *http.Request) {})
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	c := loopbackClient(t, posterOptions{Policy: Policy{AllowHTTP: true}})
	answers := map[string][]netip.Addr{
		"rebind.example.":   {netip.MustParseAddr("127.0.0.1")},
		"metadata.example.": {netip.MustParseAddr("169.254.169.254")},
		"mixed.example.":    {netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("::ffff:127.0.0.1")},
	}
	c.dialer.lookup = func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if a, ok := answers[host+"."]; ok {
			return a, nil
		}
		return nil, errors.New("no such host in the test resolver")
	}
	dials := counting(c)
	for host, reason := range map[string]string{"rebind.example": "loopback",
		"metadata.example": "link-local", "mixed.example": "private"} {
		_, err := c.Post(context.Background(), "http://"+host+port+"/hook", nil, []byte("{}"))
		var aerr *AddressError
		if !errors.As(err, &aerr) || !strings.Contains(err.Error(), host+" resolves to") ||
			!strings.Contains(err.Error(), reason) || classify(0, err) != verdictRetry {
			t.Errorf("Post to %s = %v, want a dial-time refusal (%s)", host, err, reason)
		}
	}
	if dials.Load() != 0 || conns.Load() != 0 {
		t.Errorf("%d dials, %d connections reached the receiver", dials.Load(), conns.Load())
	}
}

// The socket's Control hook refuses a forbidden address even if it is
// reached without the resolver check.
func TestControlHookRefuses(t *testing.T) {
	d := newGuardedDialer(AllowList{})
	conn, err := d.dial(context.Background(), "tcp", "127.0.0.1:9", true)
	if conn != nil {
		conn.Close()
	}
	if !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("dial 127.0.0.1:9 through the Control hook = %v", err)
	}
}

func TestHostNameOnTheAllowList(t *testing.T) {
	srv, _ := receiver(t, func(w http.ResponseWriter, _ *http.Request) {})
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	allow, _ := ParseAllowList([]string{"localhost:*"})
	c := loopbackClient(t, posterOptions{Policy: Policy{AllowHTTP: true, Allow: allow}})
	c.dialer.lookup = func(context.Context, string, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	resp, err := c.Post(context.Background(), "http://localhost"+port+"/", nil, []byte("{}"))
	if err != nil || resp.Status != 200 {
		t.Fatalf("Post to an allow-listed name = %+v, %v", resp, err)
	}
}

func TestRedirectIsAFailureNotFollowed(t *testing.T) {
	var followed atomic.Int64
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed.Add(1)
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	allow, _ := ParseAllowList([]string{"127.0.0.1:*"})
	c := loopbackClient(t, posterOptions{Policy: Policy{AllowHTTP: true, Allow: allow}})
	resp, err := c.Post(context.Background(), srv.URL+"/hook", nil, []byte("{}"))
	var serr *statusError
	if !errors.As(err, &serr) || resp.Status != 302 || !strings.Contains(err.Error(), "redirects are not followed") ||
		!strings.Contains(err.Error(), "/elsewhere") || classify(resp.Status, err) != verdictRetry {
		t.Fatalf("Post = %+v, %v", resp, err)
	}
	if followed.Load() != 0 {
		t.Fatal("the redirect was followed")
	}
}

func TestStatusesAndBounds(t *testing.T) {
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gone":
			w.WriteHeader(http.StatusGone)
		case "/busy":
			w.WriteHeader(http.StatusTooManyRequests)
		case "/big":
			w.Write([]byte(strings.Repeat("x", 4*maxResponseBody)))
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second):
			}
		}
	})
	allow, _ := ParseAllowList([]string{"127.0.0.1:*"})
	c := loopbackClient(t, posterOptions{Policy: Policy{AllowHTTP: true, Allow: allow}, Timeout: 300 * time.Millisecond})
	post := func(path string) (answer, error) {
		return c.Post(context.Background(), srv.URL+path, nil, []byte("{}"))
	}
	if r, err := post("/gone"); classify(r.Status, err) != verdictDisable {
		t.Errorf("410: %+v, %v", r, err)
	}
	if r, err := post("/busy"); classify(r.Status, err) != verdictRetry || !strings.Contains(err.Error(), "429") {
		t.Errorf("429: %+v, %v", r, err)
	}
	if r, err := post("/big"); err != nil || r.Status != 200 || len(r.Body) != keptBody {
		t.Errorf("a long answer: status %d, kept %d bytes, %v", r.Status, len(r.Body), err)
	}
	start := time.Now()
	r, err := post("/slow")
	if classify(r.Status, err) != verdictRetry || time.Since(start) > 3*time.Second {
		t.Errorf("a slow receiver: %+v, %v after %s", r, err, time.Since(start))
	}
}

// testSecret signs the requests of these tests.
const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
