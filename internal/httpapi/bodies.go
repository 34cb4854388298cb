package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// Large request bodies (a broadcast to 100,000 chats, an audience) cost
// memory in proportion to their size while they are read and decoded: the
// body, the decoder's copy, the values decoded. So that parallel large
// bodies cannot take the producer's memory, at most LargeReads bodies of
// more than LargeBody bytes are read and decoded at once in a process; the
// others wait their turn, LargeWait at most, then get a 503 with
// Retry-After. Smaller bodies never wait.
const (
	// LargeBody is the size from which a body waits for a turn.
	LargeBody = 1 << 20
	// LargeReads is how many large bodies are read and decoded at once.
	LargeReads = 2
	// LargeWait bounds the wait for a turn.
	LargeWait = 5 * time.Second
)

// largeTurns holds one token per large body being read and decoded.
var largeTurns = make(chan struct{}, LargeReads)

// readBounded reads r's body, at most maxBytes of it. A body declared
// longer than maxBytes is refused before a byte is read; one longer than
// LargeBody (declared, or found so while reading) waits for a turn before
// the rest is read. release ends the turn: call it once the body is
// decoded (it is never nil). A member over its bound (boundsScanner)
// ends the read with a 400 naming it. Errors are *Error: 413, 408 (the
// client left), 503 (no turn in time), 400.
func readBounded(w http.ResponseWriter, r *http.Request, maxBytes int64, bounds map[string]Bound) (body []byte, release func(), err error) {
	release = func() {}
	if r.ContentLength > maxBytes {
		closeAfter(w)
		return nil, release, Errorf(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "body exceeds %d bytes", maxBytes)
	}
	raw := http.MaxBytesReader(w, r.Body, maxBytes)
	var rd io.Reader = raw
	if len(bounds) > 0 {
		// A member over its bound ends the read there.
		rd = scanningReader{r: raw, s: newBoundsScanner(bounds)}
	}
	var buf bytes.Buffer
	if r.ContentLength <= LargeBody {
		// Up to LargeBody without a turn; one byte more tells a larger body.
		buf.Grow(int(max(r.ContentLength, 0)) + bytes.MinRead)
		if _, err := buf.ReadFrom(io.LimitReader(rd, LargeBody+1)); err != nil {
			return nil, release, readFailed(w, raw, err)
		}
		if buf.Len() <= LargeBody {
			return buf.Bytes(), release, nil
		}
	}
	release, herr := largeTurn(r.Context())
	if herr != nil {
		closeAfter(w)
		return nil, release, herr
	}
	// The declared length is allocated once; a body of unknown length
	// grows as it arrives.
	buf.Grow(int(max(r.ContentLength, 0)) + bytes.MinRead)
	if _, err := buf.ReadFrom(rd); err != nil {
		release()
		return nil, func() {}, readFailed(w, raw, err)
	}
	return buf.Bytes(), release, nil
}

// readFailed is the *Error of a failed read. A body refused for a member
// over its bound is read on to its end, into nothing (at most its
// maxBytes, no memory kept): a client still sending when the connection
// closed could miss the answer. Other failures close the connection.
func readFailed(w http.ResponseWriter, raw io.Reader, err error) *Error {
	e := bodyError(err)
	var bound *Error
	if errors.As(err, &bound) {
		if _, err := io.Copy(io.Discard, raw); err == nil {
			return e
		}
	}
	closeAfter(w)
	return e
}

// largeTurn waits for a large body's turn: at most LargeWait, and no
// longer than the request lives.
func largeTurn(ctx context.Context) (release func(), err *Error) {
	t := time.NewTimer(LargeWait)
	defer t.Stop()
	select {
	case largeTurns <- struct{}{}:
		return func() { <-largeTurns }, nil
	case <-ctx.Done():
		return func() {}, Errorf(http.StatusRequestTimeout, codeTimeout, "the request ended while waiting to be read")
	case <-t.C:
		return func() {}, Errorf(http.StatusServiceUnavailable, CodeUnavailable,
			"too many large bodies (over %d bytes) are being read; retry later", LargeBody)
	}
}

// bodyError is the *Error of a failed body read.
func bodyError(err error) *Error {
	var (
		tooLarge *http.MaxBytesError
		already  *Error
	)
	switch {
	case errors.As(err, &already):
		return already
	case errors.As(err, &tooLarge):
		return Errorf(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "body exceeds %d bytes", tooLarge.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.Canceled):
		return Errorf(http.StatusRequestTimeout, codeTimeout, "the body did not arrive: %v", err)
	}
	return Errorf(http.StatusBadRequest, CodeInvalidJSON, "reading the body failed: %v", err)
}

// closeAfter asks the server to close the connection after the answer (a
// body left unread); w may be nil (a body read by the caller).
func closeAfter(w http.ResponseWriter) {
	if w != nil {
		w.Header().Set("Connection", "close")
	}
}
