package feeds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter caps how long a Retry-After answer may pause a feed.
const maxRetryAfter = 24 * time.Hour

// acceptHeader prefers feed types but takes anything (many servers label
// feeds text/xml or text/html).
const acceptHeader = "application/rss+xml, application/atom+xml, application/feed+json;q=0.9, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5"

// validators are the HTTP cache validators of a feed's last 200 answer.
type validators struct {
	ETag         string
	LastModified string
}

// response is what one fetch brought back.
type response struct {
	// notModified is true for a 304 answer (nothing else is set).
	notModified bool
	body        []byte
	// next holds the validators of this answer.
	next validators
}

// statusError is a non-2xx, non-304 answer.
type statusError struct {
	code int
	// retryAfter is the server's Retry-After on 429 and 503, zero if none.
	retryAfter time.Duration
}

func (e *statusError) Error() string {
	msg := fmt.Sprintf("HTTP %d %s", e.code, http.StatusText(e.code))
	if e.retryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %v)", e.retryAfter)
	}
	return msg
}

// errTooLarge is returned when a body exceeds Config.MaxBodyBytes.
var errTooLarge = errors.New("response body too large")

// fetch GETs a feed with the validators of its last answer, within the
// feed's timeout, reading at most maxBody bytes. Errors never contain the
// URL, which may carry an access token in its query.
func fetch(ctx context.Context, client *http.Client, fd feed, userAgent string, v validators, maxBody int64, now time.Time) (response, error) {
	ctx, cancel := context.WithTimeout(ctx, fd.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fd.URL, nil)
	if err != nil {
		return response{}, errors.New("cannot build the request: check the feed's url")
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", acceptHeader)
	if v.ETag != "" {
		req.Header.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		req.Header.Set("If-Modified-Since", v.LastModified)
	}
	resp, err := client.Do(req)
	if err != nil {
		return response{}, redact(ctx, fd, err)
	}
	defer func() {
		// Drain a little so the connection can be reused, then close.
		_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
		_ = resp.Body.Close()
	}()
	switch {
	case resp.StatusCode == http.StatusNotModified:
		return response{notModified: true}, nil
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		se := &statusError{code: resp.StatusCode}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			se.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), now)
		}
		return response{}, se
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return response{}, redact(ctx, fd, err)
	}
	if int64(len(body)) > maxBody {
		return response{}, fmt.Errorf("%w: more than %d bytes", errTooLarge, maxBody)
	}
	return response{body: body, next: validators{
		ETag:         headerValue(resp.Header.Get("ETag")),
		LastModified: headerValue(resp.Header.Get("Last-Modified")),
	}}, nil
}

// headerValue keeps a validator only when it is short, printable ASCII (it
// is sent back verbatim).
func headerValue(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 512 {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return ""
		}
	}
	return s
}

// parseRetryAfter reads delay-seconds or an HTTP date; zero when absent,
// invalid or in the past, and at most maxRetryAfter.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	if d <= 0 {
		return 0
	}
	return min(d, maxRetryAfter)
}

// redact turns a client error into one without the request URL.
func redact(ctx context.Context, fd feed, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no complete answer within the timeout of %v", fd.Timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", strings.ToLower(ue.Op), ue.Err)
	}
	return err
}

// checkRedirect follows at most 5 redirects and only to http or https.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("more than 5 redirects")
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("redirect to a %q address refused: only http and https", req.URL.Scheme)
	}
	return nil
}
