package statushook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Bounds of one callback request.
const (
	// defaultTimeout bounds a whole attempt, connect to the end of the
	// answer. The Standard Webhooks specification recommends 15 to 30 s and
	// Svix waits 15 s; Herald takes the lower end so that a slow receiver
	// holds a callback worker for as little as the receivers expect.
	defaultTimeout = 15 * time.Second
	// maxResponseBody is how much of an answer is read (and discarded);
	// the connection is dropped rather than reading more.
	maxResponseBody = 64 << 10
	// keptBody is how much of an answer answer.Body keeps, for logs.
	keptBody = 512
)

// posterOptions configure a poster.
type posterOptions struct {
	// Policy is what callback URLs may point at.
	Policy Policy
	// Timeout bounds one attempt; 0 means defaultTimeout.
	Timeout time.Duration
	// UserAgent is sent with every request; empty means "Herald-Callbacks".
	UserAgent string
}

// poster posts callbacks to URLs that senders supplied, refusing the
// addresses its Policy forbids both when the URL is read and when it
// connects, following no redirect and bounding time and answer size. It
// ignores HTTP(S)_PROXY: a proxy would connect where the check cannot see.
type poster struct {
	policy    Policy
	userAgent string
	dialer    *guardedDialer
	http      *http.Client
}

// answer is what a receiver answered.
type answer struct {
	// Status is the HTTP status.
	Status int
	// Body is the start of the answer (at most 512 bytes), for logs.
	Body []byte
	// RetryAfter is how long the receiver asked to be left alone (its
	// Retry-After header, in seconds or as a date); 0 when it did not ask.
	RetryAfter time.Duration
}

// statusError is Post's error for an answer other than 2xx.
type statusError struct {
	// Status is the HTTP status.
	Status int
	// Location is the redirect target of a 3xx, which is not followed.
	Location string
}

// Error says what the receiver answered and, for a redirect, that it was
// not followed.
func (e *statusError) Error() string {
	if e.Status >= 300 && e.Status <= 399 {
		return fmt.Sprintf("receiver answered %d redirecting to %q; redirects are not followed, "+
			"a redirect is a failed delivery: set the callback_url to the final address", e.Status, e.Location)
	}
	return fmt.Sprintf("receiver answered %d %s, not 2xx", e.Status, http.StatusText(e.Status))
}

// newPoster returns a poster with its own connection pool.
func newPoster(o posterOptions) *poster {
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if o.UserAgent == "" {
		o.UserAgent = "Herald-Callbacks"
	}
	d := newGuardedDialer(o.Policy.Allow)
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: o.Timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &poster{
		policy:    o.Policy,
		userAgent: o.UserAgent,
		dialer:    d,
		http: &http.Client{
			Transport: tr,
			Timeout:   o.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}
}

// Post sends one attempt: body as application/json with headers (the
// Standard Webhooks ones from Headers) to rawURL, which is validated
// first. It returns the receiver's answer and, unless that is 2xx, an
// error: a *URLError, an *AddressError (wrapped) from the dial-time check,
// a *statusError, or the transport's error (timeouts, refused
// connections). Pass both to classify.
func (c *poster) Post(ctx context.Context, rawURL string, headers http.Header, body []byte) (answer, error) {
	u, err := c.policy.ValidateURL(rawURL)
	if err != nil {
		return answer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return answer{}, fmt.Errorf("callback request: %w", err)
	}
	for k, vs := range headers {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("posting callback to %s: %w", endpointOf(u), withoutURL(err))
	}
	defer resp.Body.Close()
	kept, err := readBounded(resp.Body)
	r := answer{Status: resp.StatusCode, Body: kept, RetryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return r, &statusError{Status: resp.StatusCode, Location: resp.Header.Get("Location")}
	}
	if err != nil && !errors.Is(err, errBodyTooLong) {
		return r, fmt.Errorf("reading the callback answer from %s: %w", endpointOf(u), withoutURL(err))
	}
	return r, nil
}

// withoutURL drops the *url.Error that net/http wraps its errors in: it
// quotes the whole URL, query string and all, and a query may hold the
// receiver's token. The caller names the endpoint instead.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// retryAfter reads a Retry-After header: a count of seconds, or an HTTP
// date from which now is subtracted. Anything else, or a time past, is 0.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		switch {
		case n <= 0:
			return 0
		case n > int64(maxRetryAfter/time.Second):
			return maxRetryAfter
		}
		return time.Duration(n) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return min(at.Sub(now), maxRetryAfter)
	}
	return 0
}

// maxRetryAfter bounds the wait a receiver's Retry-After can ask for: a
// day, the longest wait of a schedule.
const maxRetryAfter = maxScheduleWait

// errBodyTooLong marks an answer cut at maxResponseBody.
var errBodyTooLong = errors.New("answer longer than the limit")

// readBounded reads at most maxResponseBody bytes of an answer, keeping
// the first keptBody, and reports errBodyTooLong when there was more.
func readBounded(r io.Reader) ([]byte, error) {
	var kept bytes.Buffer
	n, err := io.Copy(io.Discard, io.TeeReader(io.LimitReader(r, maxResponseBody+1), limitWriter{&kept, keptBody}))
	if err != nil {
		return kept.Bytes(), err
	}
	if n > maxResponseBody {
		return kept.Bytes(), errBodyTooLong
	}
	return kept.Bytes(), nil
}

// limitWriter keeps the first n bytes written to it and drops the rest.
type limitWriter struct {
	buf *bytes.Buffer
	n   int
}

// Write implements io.Writer, never failing.
func (w limitWriter) Write(p []byte) (int, error) {
	if room := w.n - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// CloseIdleConnections closes the pooled connections (on shutdown).
func (c *poster) CloseIdleConnections() { c.http.CloseIdleConnections() }
