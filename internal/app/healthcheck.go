package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/herald-dev/herald/internal/durable"
)

// Healthcheck asks the local server on listen for /readyz and returns an exit
// code (0 healthy). It needs no shell or curl in the container image.
func Healthcheck(ctx context.Context, listen string, stderr io.Writer) int {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		fmt.Fprintf(stderr, "healthcheck: bad listen address %q: %v\n", listen, err)
		return 2
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/readyz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "healthcheck: %v\n", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "healthcheck: /readyz answered %s\n", resp.Status)
		return 1
	}
	return 0
}

// healthHandler serves /livez, /readyz (ready answers nil: Redis is
// reachable and takes writes) and /metrics for processes without an API of
// their own.
func healthHandler(ready func(context.Context) error, metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := ready(ctx); err != nil {
			msg := "redis unavailable"
			var np *durable.NotPrimaryError
			if errors.As(err, &np) {
				msg = err.Error()
			}
			http.Error(w, msg+"\n", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("GET /metrics", metrics)
	return mux
}
