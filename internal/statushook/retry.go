package statushook

import (
	"errors"
	"net/http"
	"time"
)

// schedule is the Svix retry schedule (https://docs.svix.com/retries):
// immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, each delay
// counted from the failure of the attempt before. The Standard Webhooks
// specification ("Deliverability and reliability") gives the same schedule
// up to 10 h as its example and goes on with 14 h, 20 h and 24 h; Herald
// stops at Svix's eight attempts, about 27.6 h after the first.
var schedule = [...]time.Duration{
	0,
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
}

// MaxAttempts is how many times one event is tried on one endpoint.
var MaxAttempts = len(schedule)

// Delay returns how long to wait, after the previous attempt failed, before
// attempt number attempt (1 is the first attempt, made at once), and false
// when attempt is past MaxAttempts: the event is then given up on. An
// attempt below 1 is treated as the first.
func Delay(attempt int) (time.Duration, bool) {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > len(schedule) {
		return 0, false
	}
	return schedule[attempt-1], true
}

// Outcome is what a delivery attempt's result means for the event and its
// endpoint.
type Outcome int

// The outcomes Classify returns.
const (
	// Delivered: the receiver answered 2xx; the event is done.
	Delivered Outcome = iota
	// Retry: try again after Delay(attempt+1), or give up when it says so.
	Retry
	// Disable: the receiver answered 410 Gone, or the endpoint can never be
	// called (its URL fails ValidateURL): stop sending to the endpoint.
	Disable
)

// String names the outcome for logs and metrics labels.
func (o Outcome) String() string {
	switch o {
	case Delivered:
		return "delivered"
	case Retry:
		return "retry"
	case Disable:
		return "disable"
	}
	return "unknown"
}

// Classify maps one attempt's result to an Outcome. status is the HTTP
// status the receiver answered (0 when there was no answer) and err the
// error Client.Post returned.
//
//   - 2xx: Delivered.
//   - 410 Gone: Disable, as the Standard Webhooks specification asks ("the
//     server is no longer interested in receiving webhooks").
//   - an invalid callback URL (*URLError): Disable; retrying cannot help.
//   - everything else is Retry: 429 and 5xx, timeouts, connection errors,
//     3xx (redirects are not followed, so a redirect is a failure, as with
//     Svix), and the other 4xx too. Svix treats every non-2xx answer as a
//     failure to retry, and so does the specification ("the rest of the
//     status codes should be treated as a failure"): a 404 or 401 is often
//     a receiver being deployed or misconfigured for a while, and the retry
//     schedule is bounded, so a retry costs little and can save the event.
//     An address refused at dial time (ErrForbiddenAddress) is retried too:
//     no connection is made, and DNS may point the name back at a public
//     address; the endpoint's failure limit disables it if it stays so.
func Classify(status int, err error) Outcome {
	var uerr *URLError
	switch {
	case errors.As(err, &uerr):
		return Disable
	case status == http.StatusGone:
		return Disable
	case status >= 200 && status <= 299 && err == nil:
		return Delivered
	}
	return Retry
}
