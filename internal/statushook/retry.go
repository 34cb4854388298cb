package statushook

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/config"
)

// Schedule is the waits between the attempts of one event at one
// endpoint, after the first attempt, which is made at once: the wait
// before the second attempt, then before the third, and so on. An event
// whose last attempt fails is given up on (archived).
type Schedule []time.Duration

// DefaultSchedule is the Svix retry schedule (https://docs.svix.com/retries):
// immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, each wait
// counted from the failure of the attempt before. The Standard Webhooks
// specification ("Deliverability and reliability") gives the same schedule
// up to 10 h as its example and goes on with 14 h, 20 h and 24 h; Herald
// stops at Svix's eight attempts, the last about 27.6 h after the first.
func DefaultSchedule() Schedule {
	return Schedule{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
}

// Attempts is how many times one event is tried: the first attempt and
// one per wait.
func (s Schedule) Attempts() int { return len(s) + 1 }

// Next returns the wait before the next attempt once failed attempts have
// failed (1 after the first), and false when none is left: the event is
// given up on. A count below 1 is taken as 1.
func (s Schedule) Next(failed int) (time.Duration, bool) {
	failed = max(failed, 1)
	if failed > len(s) {
		return 0, false
	}
	return s[failed-1], true
}

// Span is the time from the first attempt to the last, the waits alone
// (without the attempts' own time).
func (s Schedule) Span() time.Duration {
	var total time.Duration
	for _, d := range s {
		total += d
	}
	return total
}

// String renders the schedule as HERALD_CALLBACK_RETRY_SCHEDULE is
// written: "5s,5m,30m,2h,5h,10h,10h".
func (s Schedule) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = config.FmtDur(d)
	}
	return strings.Join(parts, ",")
}

// parseSchedule reads waits separated by commas, each a Go duration ("5s",
// "1h30m") or a number with the unit s, m or h ("10h").
func parseSchedule(text string) (Schedule, error) {
	var s Schedule
	for item := range strings.SplitSeq(text, ",") {
		item = strings.TrimSpace(item)
		d, err := time.ParseDuration(item)
		if err != nil {
			return nil, fmt.Errorf("has %q, which is not a duration such as 5s, 5m or 2h", item)
		}
		s = append(s, d)
	}
	return s, nil
}

// verdict is what a delivery attempt's result means for the event and its
// endpoint.
type verdict int

// The verdicts classify returns.
const (
	// verdictDelivered: the receiver answered 2xx; the event is done.
	verdictDelivered verdict = iota
	// verdictRetry: try again after the Schedule's next wait, or give up when
	// none is left.
	verdictRetry
	// verdictDisable: the receiver answered 410 Gone, or the endpoint can never be
	// called (its URL fails ValidateURL): stop sending to the endpoint.
	verdictDisable
)

// String names the outcome for logs and metrics labels.
func (o verdict) String() string {
	switch o {
	case verdictDelivered:
		return "delivered"
	case verdictRetry:
		return "retry"
	case verdictDisable:
		return "disable"
	}
	return "unknown"
}

// classify maps one attempt's result to a verdict. status is the HTTP
// status the receiver answered (0 when there was no answer) and err the
// error poster.Post returned.
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
func classify(status int, err error) verdict {
	var uerr *URLError
	switch {
	case errors.As(err, &uerr):
		return verdictDisable
	case status == http.StatusGone:
		return verdictDisable
	case status >= 200 && status <= 299 && err == nil:
		return verdictDelivered
	}
	return verdictRetry
}
