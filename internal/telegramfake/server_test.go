package telegramfake

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestLatency(t *testing.T) {
	t.Parallel()
	// A client that leaves during the delay gets nothing and sends nothing.
	s, _ := newFake(t, Config{Latency: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/bot"+testToken+"/sendMessage?chat_id=42&text=x", nil)
	if got := serve(s, r); got.body != "" {
		t.Errorf("answered %d %s after the client left", got.code, got.body)
	}
	if n := len(s.Messages()); n != 0 {
		t.Errorf("%d messages delivered after the client left", n)
	}

	// A patient client is served; at this TimeScale an hour lasts 1ms.
	fast, _ := newFake(t, Config{Latency: time.Hour, TimeScale: 3_600_000})
	mustAccept(t, send(fast, text("42", "x")))
}

func TestStartAddr(t *testing.T) {
	t.Parallel()
	s := startFake(t, Config{})
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %q, want a loopback address", s.URL())
	}
	if _, err := Start(Config{Addr: strings.TrimPrefix(s.URL(), "http://")}); err == nil || !strings.Contains(err.Error(), "Config.Addr") {
		t.Errorf("Start on a busy port: %v", err)
	}
	idle := New(Config{})
	defer idle.Close()
	if u := idle.URL(); u != "" {
		t.Errorf("URL of an unstarted server %q, want empty", u)
	}
}

func TestMountedUnderPrefix(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	mux := http.NewServeMux()
	mux.Handle("/telegram/", http.StripPrefix("/telegram", s))
	r := httptest.NewRequest(http.MethodGet, "/telegram/bot"+testToken+"/getMe", nil)
	mustAccept(t, serve(mux, r))
}
