package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Timeouts of every Herald HTTP server. They bound what a slow or idle
// client can hold: a connection that sends nothing is closed after
// readHeaderTimeout, a request whose body is still arriving after
// readTimeout fails and its connection is closed, and a keep-alive
// connection idle for idleTimeout is closed.
const (
	// readHeaderTimeout bounds reading a request's line and headers.
	readHeaderTimeout = 5 * time.Second
	// readTimeout bounds reading a whole request, body included: 1 MiB
	// needs at least 52 KB/s. Unauthenticated bodies get less (BodyGate).
	readTimeout = 20 * time.Second
	// writeTimeout bounds a handler and the writing of its answer.
	writeTimeout = 60 * time.Second
	// idleTimeout closes keep-alive connections idle this long.
	idleTimeout = 20 * time.Second
	// maxHeaderBytes bounds a request's headers (Go's default is 1 MiB).
	maxHeaderBytes = 64 << 10
	// shutdownTimeout is how long in-flight requests get when the server
	// stops.
	shutdownTimeout = 5 * time.Second
)

// NewServer returns an http.Server for h with Herald's timeouts and header
// limit. Every server Herald runs (producer API, metrics listener, worker
// health) is built here.
func NewServer(h http.Handler, log *slog.Logger) *http.Server {
	if log == nil {
		log = slog.Default()
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.With("component", "http").Handler(), slog.LevelDebug),
	}
}

// ListenAndServe serves h on addr with NewServer until ctx ends, then shuts
// the server down, giving requests in flight a few seconds.
func ListenAndServe(ctx context.Context, addr string, h http.Handler, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return Serve(ctx, ln, h, log)
}

// Serve is ListenAndServe on an open listener, which it closes.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	srv := NewServer(h, log)
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-ctx.Done():
		case <-stopped:
			return
		}
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("listening", "addr", ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
