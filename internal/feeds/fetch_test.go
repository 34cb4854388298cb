package feeds

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"120", 2 * time.Minute},
		{"0", 0},
		{"-5", 0},
		{"soon", 0},
		{"99999999999", maxRetryAfter},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{now.Add(1000 * time.Hour).Format(http.TimeFormat), maxRetryAfter},
	} {
		if got := parseRetryAfter(tc.in, now); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestFetchLimits(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 2048)))
	})
	mux.HandleFunc("/ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://files.test/feed.xml", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "60") // ignored: only 429 and 503 pause
		w.WriteHeader(http.StatusGone)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	client := *srv.Client()
	client.CheckRedirect = checkRedirect
	now := time.Now()
	feed := func(path string, timeout time.Duration) feed {
		return feed{Name: "t", URL: srv.URL + path + "?token=secret-value", Timeout: timeout}
	}

	if _, err := fetch(context.Background(), &client, feed("/big", time.Minute), "ua", validators{}, 1024, now); !errors.Is(err, errTooLarge) {
		t.Errorf("a 2 KiB body under a 1 KiB limit: %v", err)
	}
	if r, err := fetch(context.Background(), &client, feed("/big", time.Minute), "ua", validators{}, 4096, now); err != nil || len(r.body) != 2048 {
		t.Errorf("a 2 KiB body under a 4 KiB limit: %v", err)
	}
	for _, path := range []string{"/ftp", "/loop", "/slow"} {
		_, err := fetch(context.Background(), &client, feed(path, 200*time.Millisecond), "ua", validators{}, 1024, now)
		if err == nil {
			t.Errorf("%s: no error", path)
			continue
		}
		if strings.Contains(err.Error(), "secret-value") || strings.Contains(err.Error(), srv.URL) {
			t.Errorf("%s: the error reveals the URL: %v", path, err)
		}
	}
	_, err := fetch(context.Background(), &client, feed("/gone", time.Minute), "ua", validators{}, 1024, now)
	var se *statusError
	if !errors.As(err, &se) || se.code != http.StatusGone || se.retryAfter != 0 {
		t.Errorf("410: %v", err)
	}
}

func TestHeaderValue(t *testing.T) {
	t.Parallel()
	if got := headerValue(` W/"abc" `); got != `W/"abc"` {
		t.Errorf("got %q", got)
	}
	for _, bad := range []string{"a\r\nb", "é", strings.Repeat("x", 600)} {
		if got := headerValue(bad); got != "" {
			t.Errorf("headerValue(%q) = %q, want it dropped", bad, got)
		}
	}
}
