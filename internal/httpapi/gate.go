package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// Defaults of NewBodyGate.
const (
	// DefaultGateReads is how many unauthenticated bodies are read at once.
	DefaultGateReads = 16
	// DefaultGateTimeout bounds waiting for a slot and reading the body of
	// an unauthenticated request.
	DefaultGateTimeout = 10 * time.Second
)

// codeTimeout is the code of a 408: the body did not arrive in time.
const codeTimeout = "timeout"

// BodyGate reads the bodies of requests that cannot be authenticated before
// their body is read (signed webhooks, whose signature covers the body; every
// request when authentication is disabled). It bounds what such requests
// can cost: a declared length over the limit is refused before a byte is
// read, at most a fixed number of bodies are read at once (the others wait
// for a slot, then get a 503), and waiting plus reading must end within the
// gate's timeout, after which the connection is closed.
type BodyGate struct {
	slots   chan struct{}
	timeout time.Duration
}

// NewBodyGate returns a gate reading at most reads bodies at once, each
// within timeout (zero values take the defaults).
func NewBodyGate(reads int, timeout time.Duration) *BodyGate {
	if reads <= 0 {
		reads = DefaultGateReads
	}
	if timeout <= 0 {
		timeout = DefaultGateTimeout
	}
	return &BodyGate{slots: make(chan struct{}, reads), timeout: timeout}
}

// ReadBody reads r's body, at most maxBytes, through the gate. Errors are
// *Error: 413 for a body over maxBytes (declared or read), 503 when no slot
// freed in time, 408 when the body did not arrive in time.
func (g *BodyGate) ReadBody(w http.ResponseWriter, r *http.Request, maxBytes int64) ([]byte, error) {
	if r.ContentLength > maxBytes {
		w.Header().Set("Connection", "close")
		return nil, Errorf(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "body exceeds %d bytes", maxBytes)
	}
	deadline := time.Now().Add(g.timeout)
	// The connection's read deadline ends a body that arrives too slowly;
	// a ResponseWriter without one (a test recorder) is read as it is.
	_ = http.NewResponseController(w).SetReadDeadline(deadline)
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		w.Header().Set("Connection", "close")
		return nil, Errorf(http.StatusServiceUnavailable, CodeUnavailable,
			"too many unauthenticated requests are being read; retry later")
	}
	defer func() { <-g.slots }()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err == nil {
		return body, nil
	}
	w.Header().Set("Connection", "close")
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, Errorf(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "body exceeds %d bytes", tooLarge.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, Errorf(http.StatusRequestTimeout, codeTimeout, "the body did not arrive within %s", g.timeout)
	default:
		return nil, Errorf(http.StatusBadRequest, CodeInvalidJSON, "reading the body failed: %v", err)
	}
}
