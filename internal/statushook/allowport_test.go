package statushook

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestAllowListNamesHostAndPort: an entry with a port lets callbacks reach
// that host on that port only: the receiver on the named port gets its
// callback, the same host on another port is refused without a
// connection, at the URL check and at the dial alike.
func TestAllowListNamesHostAndPort(t *testing.T) {
	srv, conns := receiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	allow, err := ParseAllowList([]string{hostPort, "receiver.internal:9000", "[::1]:8080"})
	if err != nil {
		t.Fatal(err)
	}
	p := Policy{Allow: allow}
	for _, u := range []string{srv.URL + "/hook", "http://receiver.internal:9000/hook", "http://[::1]:8080/hook"} {
		if _, err := p.ValidateURL(u); err != nil {
			t.Errorf("ValidateURL(%s), a named host and port: %v", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:1/hook", "https://127.0.0.1/hook", "http://receiver.internal:9001/hook",
		"https://receiver.internal:25/hook", "http://[::1]:8081/hook"} {
		if _, err := p.ValidateURL(u); err == nil {
			t.Errorf("ValidateURL(%s), a port the list does not name: accepted", u)
		}
	}
	c := loopbackClient(t, posterOptions{Policy: Policy{AllowHTTP: true, Allow: allow}})
	resp, err := c.Post(context.Background(), srv.URL+"/hook", nil, []byte("{}"))
	if err != nil || resp.Status != http.StatusNoContent {
		t.Fatalf("Post to the named port = %+v, %v", resp, err)
	}
	before := conns.Load()
	dials := counting(c)
	other := "http://127.0.0.1:" + otherPort(hostPort) + "/hook"
	if _, err := c.Post(context.Background(), other, nil, []byte("{}")); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("Post(%s), another port of the allowed host: %v, want a forbidden address", other, err)
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("%d connection attempts to a port the list does not name", n)
	}
	if n := conns.Load(); n != before {
		t.Errorf("the receiver got %d more connections", n-before)
	}
	for _, bad := range []string{"127.0.0.1:0", "host:70000", "host:x", "[fe80::1%eth0]:80"} {
		if _, err := ParseAllowList([]string{bad}); err == nil {
			t.Errorf("ParseAllowList(%q) accepted", bad)
		}
	}
}

// otherPort is a port above 1023 other than hostPort's.
func otherPort(hostPort string) string {
	if strings.HasSuffix(hostPort, ":1025") {
		return "1026"
	}
	return "1025"
}

// TestAllowListWithoutAPortTakesTheDefault: an address or a host name
// without a port permits the URL scheme's default port alone (443 for
// https, 80 for http), at the URL check and at the dial; "*" permits
// every port; a CIDR permits every port of its range.
func TestAllowListWithoutAPortTakesTheDefault(t *testing.T) {
	allow, err := ParseAllowList([]string{"127.0.0.1", "receiver.internal", "[::1]:*", "10.1.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	p := Policy{Allow: allow}
	for _, u := range []string{"https://127.0.0.1/hook", "http://127.0.0.1/hook", "https://127.0.0.1:443/hook",
		"http://receiver.internal:80/hook", "https://receiver.internal/hook", "http://[::1]:8080/hook", "http://10.1.2.3:9000/hook"} {
		if _, err := p.ValidateURL(u); err != nil {
			t.Errorf("ValidateURL(%s): %v", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:8080/hook", "https://127.0.0.1:80/hook", "http://127.0.0.1:443/hook",
		"https://127.0.0.1:8443/hook", "http://receiver.internal:9000/hook", "https://localhost/hook"} {
		if _, err := p.ValidateURL(u); err == nil {
			t.Errorf("ValidateURL(%s), a port other than the scheme's default of a portless entry: accepted", u)
		}
	}
	srv, conns := receiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	c := loopbackClient(t, posterOptions{Policy: Policy{AllowHTTP: true, Allow: allow}})
	dials := counting(c)
	if _, err := c.Post(context.Background(), srv.URL+"/hook", nil, []byte("{}")); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("Post(%s), a test port of a portless entry: %v, want a forbidden address", srv.URL, err)
	}
	if n, m := dials.Load(), conns.Load(); n != 0 || m != 0 {
		t.Errorf("%d connection attempts, %d connections to a port the entry does not permit", n, m)
	}
	for _, bad := range []string{"127.0.0.1:**", "host:*x"} {
		if _, err := ParseAllowList([]string{bad}); err == nil {
			t.Errorf("ParseAllowList(%q) accepted", bad)
		}
	}
}
