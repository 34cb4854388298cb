package telegram

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// headLimit is how many leading response bytes an exchange keeps, to quote
// a non-JSON body in an error description.
const headLimit = 512

// exchange records what happened on the wire during one Bot API call: whether
// the request was fully written, the response status, and any failure while
// reading the response body. The library's MakeRequest hides all of this,
// so the call's HTTPClient fills it in.
type exchange struct {
	mu        sync.Mutex
	written   bool  // the last attempt wrote the whole request
	doErr     error // error from http.Client.Do
	responded bool  // response headers arrived
	status    int
	readErr   error  // first non-EOF error while reading the body
	head      []byte // first headLimit bytes of the body
}

// snapshot is a race-free copy of an exchange's fields.
type snapshot struct {
	written   bool
	doErr     error
	responded bool
	status    int
	readErr   error
	head      []byte
}

func (x *exchange) snapshot() snapshot {
	x.mu.Lock()
	defer x.mu.Unlock()
	return snapshot{
		written:   x.written,
		doErr:     x.doErr,
		responded: x.responded,
		status:    x.status,
		readErr:   x.readErr,
		head:      append([]byte(nil), x.head...),
	}
}

func (x *exchange) setWritten(v bool) {
	x.mu.Lock()
	x.written = v
	x.mu.Unlock()
}

// callDoer is the tgbotapi.HTTPClient of a single call. It puts the call's
// context, with write tracing, on the request and wraps the response body
// to observe it.
type callDoer struct {
	ctx  context.Context
	base *http.Client
	x    *exchange
}

// Do sends req with the call's context and records the outcome.
func (d *callDoer) Do(req *http.Request) (*http.Response, error) {
	x := d.x
	if late(d.ctx) {
		x.mu.Lock()
		x.doErr = ErrLate
		x.mu.Unlock()
		return nil, ErrLate
	}
	var fresh atomic.Bool // the attempt's connection was opened for it
	trace := &httptrace.ClientTrace{
		// The transport may retry on a fresh connection when nothing was
		// written; each attempt starts with GetConn.
		GetConn: func(string) { x.setWritten(false) },
		GotConn: func(info httptrace.GotConnInfo) { fresh.Store(!info.Reused) },
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			x.setWritten(info.Err == nil)
		},
	}
	req = req.WithContext(httptrace.WithClientTrace(d.ctx, trace))
	lateBody(d.ctx, req, &fresh)
	resp, err := d.base.Do(req)
	x.mu.Lock()
	defer x.mu.Unlock()
	if err != nil {
		x.doErr = err
		return nil, err
	}
	x.responded = true
	x.status = resp.StatusCode
	resp.Body = &watchedBody{ReadCloser: resp.Body, x: x}
	return resp, nil
}

// lateBody makes the send-by check again when the transport starts on
// req's body, which it does only once it holds a connection, for a
// request that had to wait for a new one (fresh: a dial, a TLS handshake;
// the first sends of a burst, where the bench saw the second send to a
// chat reach the fake less than its second after the first): it fails
// with ErrLate instead of leaving late. The transport writes the headers
// of such a body ahead of it, so they may be on the wire; a request whose
// declared body never follows is cut off with its connection and is no
// call Telegram can act on. A request on a reused connection is not cut
// off at its send-by time: cutting it closes a warm connection, so that
// the next send waits for a dial (at 1,000 sends a second, that cascade
// cut 2-3% of the requests and slowed the drain by a third). It is cut
// off only past the grant's later cut-off (ratelimit.Grant.CutOff): a
// process that had no core for tens of milliseconds between the check
// and the write (a worker on a loaded machine took 45 ms) would send
// closer to the sends reserved after it than the window allows. The
// transport's own retry on a fresh connection (GetBody) is checked the
// same way.
func lateBody(ctx context.Context, req *http.Request, fresh *atomic.Bool) {
	if req.Body == nil || req.Body == http.NoBody {
		return
	}
	_, by := ctx.Value(sendByKey{}).(time.Time)
	_, cut := ctx.Value(cutOffKey{}).(time.Time)
	if !by && !cut {
		return
	}
	req.Body = &sendByBody{ReadCloser: req.Body, ctx: ctx, fresh: fresh}
	if get := req.GetBody; get != nil {
		req.GetBody = func() (io.ReadCloser, error) {
			b, err := get()
			if err != nil || b == nil || b == http.NoBody {
				return b, err
			}
			return &sendByBody{ReadCloser: b, ctx: ctx, fresh: fresh}, nil
		}
	}
}

// sendByBody is a request body whose first read fails with ErrLate once
// the send-by time of ctx has passed, on a fresh connection, or its
// cut-off, on any.
type sendByBody struct {
	io.ReadCloser
	ctx     context.Context
	fresh   *atomic.Bool
	started bool
}

func (b *sendByBody) Read(p []byte) (int, error) {
	if !b.started {
		b.started = true
		if b.fresh.Load() && late(b.ctx) || cutOff(b.ctx) {
			return 0, ErrLate
		}
	}
	return b.ReadCloser.Read(p)
}

// watchedBody keeps the first bytes of a response body and its first read
// error in the exchange.
type watchedBody struct {
	io.ReadCloser
	x *exchange
}

// Read reads from the body and records what it saw.
func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.x.mu.Lock()
	defer b.x.mu.Unlock()
	if room := headLimit - len(b.x.head); room > 0 && n > 0 {
		b.x.head = append(b.x.head, p[:min(n, room)]...)
	}
	if err != nil && !errors.Is(err, io.EOF) && b.x.readErr == nil {
		b.x.readErr = err
	}
	return n, err
}

// drainLimit is how much unread body Close discards so that the keep-alive
// connection can be reused; json.Decoder may stop short of EOF.
const drainLimit = 4 << 10

// Close drains a little of what is left of the body, then closes it.
func (b *watchedBody) Close() error {
	_, _ = io.CopyN(io.Discard, b.ReadCloser, drainLimit)
	return b.ReadCloser.Close()
}
