package producer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/keys"
)

// heraldSlot is a key of Herald's own hash slot: what the heartbeats, the
// idempotency claims and the wake-up list write to. A settle always
// includes it.
var heraldSlot = keys.HeartbeatRecords()

// notStoredMessage is the 503 message when a settle fails: the master may
// hold the writes, so the retry must carry the same idempotency key.
func notStoredMessage(err error) string {
	if errors.Is(err, durable.ErrNotReplicated) {
		return "stored on the Redis master but not yet confirmed by its replicas; retry with the same Idempotency-Key"
	}
	return "the queue is unavailable; the request may not be stored, retry with the same Idempotency-Key"
}

// settled answers the 2xx of a mounted endpoint (alerts, heartbeats,
// webhooks) only once what it wrote is on the replicas the settings ask
// for: for a request other than GET and HEAD, a 2xx status the handler
// writes is held back until the Enqueuer's Settle returns. When it fails
// the client gets 503 with Retry-After instead, and the handler's headers
// and body are dropped.
func (a *api) settled(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead || !a.cfg.Enqueuer.Durable() {
			next.ServeHTTP(w, r)
			return
		}
		ctx := durable.Track(r.Context())
		sw := &settleWriter{ResponseWriter: w, settle: func() error { return a.cfg.Enqueuer.Settle(ctx, heraldSlot) }}
		next.ServeHTTP(sw, r.WithContext(ctx))
		if !sw.decided {
			// The handler wrote nothing: net/http would answer 200.
			sw.WriteHeader(http.StatusOK)
		}
		if sw.err != nil {
			// The route pattern, not the path: some paths hold a credential
			// (the inbound formats put the token where each service does).
			a.cfg.Logger.Warn("answering 503: the request's writes were not confirmed", "route", r.Pattern, "error", sw.err)
		}
	})
}

// settleWriter holds a 2xx back until settle returns.
type settleWriter struct {
	http.ResponseWriter
	settle  func() error
	decided bool  // the status went out (or was replaced)
	err     error // settle's error: the handler's answer is dropped
}

func (s *settleWriter) WriteHeader(code int) {
	if s.decided {
		if s.err == nil {
			s.ResponseWriter.WriteHeader(code) // let net/http report the superfluous call
		}
		return
	}
	s.decided = true
	if code >= 200 && code < 300 {
		if s.err = s.settle(); s.err != nil {
			h := s.ResponseWriter.Header()
			for k := range h {
				delete(h, k)
			}
			h.Set("Retry-After", "1")
			httpapi.WriteError(s.ResponseWriter, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable, "%s", notStoredMessage(s.err)))
			return
		}
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *settleWriter) Write(p []byte) (int, error) {
	if !s.decided {
		s.WriteHeader(http.StatusOK)
	}
	if s.err != nil {
		return len(p), nil // the handler's body of a replaced answer
	}
	return s.ResponseWriter.Write(p)
}

// Flush passes on to the underlying writer once the status is settled.
func (s *settleWriter) Flush() {
	if !s.decided {
		s.WriteHeader(http.StatusOK)
	}
	if f, ok := s.ResponseWriter.(http.Flusher); ok && s.err == nil {
		f.Flush()
	}
}

// Hijack is refused: a hijacked connection would bypass the settle.
func (s *settleWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return nil, nil, fmt.Errorf("producer: %T does not hijack", s)
}

// Unwrap lets http.ResponseController reach the underlying writer (read
// deadlines, for instance).
func (s *settleWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// readiness is /readyz's check: the configured one, else a PING.
func (a *api) readiness(ctx context.Context) error {
	if a.cfg.Ready != nil {
		return a.cfg.Ready(ctx)
	}
	return a.cfg.Redis.Ping(ctx).Err()
}
