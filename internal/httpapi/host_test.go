package httpapi

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestAllowHosts sends requests with the Host headers of a loopback server,
// of rebound names and of other entries, to the hosts a server on
// 127.0.0.1:8080 allows and to an explicit list.
func TestAllowHosts(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	loopback := AllowHosts(ListenHosts("127.0.0.1:8080"), ok)
	listed := AllowHosts([]string{"Herald.Example", "10.0.0.5:8080", "[fe80::1]", ""}, ok)
	tests := []struct {
		name string
		h    http.Handler
		host string
		want int
	}{
		{"127.0.0.1 with port", loopback, "127.0.0.1:8080", 204},
		{"127.0.0.1 without port", loopback, "127.0.0.1", 204},
		{"localhost", loopback, "localhost:8080", 204},
		{"localhost in capitals, trailing dot", loopback, "LocalHost.:8080", 204},
		{"IPv6 loopback", loopback, "[::1]:8080", 204},
		{"IPv6 loopback without port", loopback, "[::1]", 204},
		{"IPv6 loopback spelt long", loopback, "[0:0:0:0:0:0:0:1]:8080", 204},
		{"tunnelled to another port", loopback, "localhost:9000", 204},
		{"rebound name", loopback, "evil.example:8080", 421},
		{"rebound name without port", loopback, "evil.example", 421},
		{"subdomain of localhost", loopback, "evil.localhost:8080", 421},
		{"name ending in localhost", loopback, "evillocalhost:8080", 421},
		{"another IP address (a relay, say)", loopback, "172.17.0.1:41000", 204},
		{"no Host", loopback, "", 421},
		{"listed name, any case", listed, "herald.example:443", 204},
		{"listed address on its port", listed, "10.0.0.5:8080", 204},
		{"listed address on another port", listed, "10.0.0.5:8081", 421},
		{"listed address without port", listed, "10.0.0.5", 421},
		{"listed IPv6", listed, "[fe80::1]:8080", 204},
		{"loopback not listed", listed, "localhost", 421},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(http.MethodGet, "/v1/messages", nil)
		r.Host = tc.host
		w := httptest.NewRecorder()
		tc.h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: Host %q answered %d, want %d (%s)", tc.name, tc.host, w.Code, tc.want, w.Body)
		}
	}
}

// TestAllowHostsError checks the 421's JSON body: its code, the Host it
// refused, the allowed names, and a URL that works, from the address the
// request came in on.
func TestAllowHostsError(t *testing.T) {
	t.Parallel()
	h := AllowHosts(ListenHosts("127.0.0.1:8080"), http.NotFoundHandler())
	r := httptest.NewRequest(http.MethodPost, "/v1/messages", nil)
	r.Host = "evil.example:8080"
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusMisdirectedRequest {
		t.Fatalf("status %d, want 421", w.Code)
	}
	var body ErrorBody
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %s: %v", w.Body, err)
	}
	if body.Error.Code != CodeMisdirectedHost {
		t.Errorf("code %q, want %q", body.Error.Code, CodeMisdirectedHost)
	}
	for _, want := range []string{`"evil.example:8080"`, "localhost, 127.0.0.1, [::1]", "DNS rebinding", "open http://127.0.0.1:8080 instead"} {
		if !strings.Contains(body.Error.Message, want) {
			t.Errorf("message %q lacks %q", body.Error.Message, want)
		}
	}

	// Without the connection's address: the first allowed name, on the
	// request's port.
	r = httptest.NewRequest(http.MethodGet, "/", nil)
	r.Host = "evil.example:9000"
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if !strings.Contains(w.Body.String(), "open http://localhost:9000 instead") {
		t.Errorf("body %s does not point at localhost:9000", w.Body)
	}
}

// TestListenHosts derives the allowed hosts from listen addresses.
func TestListenHosts(t *testing.T) {
	t.Parallel()
	loop := []string{"localhost", "127.0.0.1", "::1", "0.0.0.0"}
	tests := []struct {
		addr string
		want []string
	}{
		{"127.0.0.1:8080", loop},
		{"localhost:8080", loop},
		{"[::1]:0", loop},
		{"127.0.0.2:8080", loop},
		{"192.168.1.5:8080", loop},
		{"[2001:db8::1]:8080", loop},
		{"herald.lan:8080", append(slices.Clone(loop), "herald.lan")},
		{":8080", loop},
		{"0.0.0.0:8080", loop},
		{"[::]:8080", loop},
	}
	for _, tc := range tests {
		if got := ListenHosts(tc.addr); !slices.Equal(got, tc.want) {
			t.Errorf("ListenHosts(%q) = %q, want %q", tc.addr, got, tc.want)
		}
	}
	// All interfaces: any address the machine is reached by, never a name.
	h := AllowHosts(ListenHosts(":8080"), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	for host, want := range map[string]int{"192.168.1.5:8080": 204, "[2001:db8::1]:8080": 204, "localhost:8080": 204, "evil.example:8080": 421} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("listening on :8080, Host %q answered %d, want %d", host, w.Code, want)
		}
	}
}
