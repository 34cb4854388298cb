package broker

import (
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// A handler ends an attempt with one of three outcomes besides success
// (nil). Snooze and Retry hand the task back to asynq as a retry and have
// the server's promoter make it pending again, at the head of its queue, at
// the exact time asked for; asynq's forwarder is only the backstop should the
// process die first (backstopDelay). Archive stops at once.

// Snooze hands the task back until d has passed. It is not a failure: the
// task's attempt count is unchanged (a rate-limit wait, a 429 pause).
func Snooze(d time.Duration, reason string) error {
	return &laterError{delay: d, reason: reason}
}

// Retry hands the task back until d has passed after a failure that counts
// against the task's retry budget; err is kept as the cause (the web UI shows
// it as the task's last error).
func Retry(d time.Duration, reason string, err error) error {
	return &laterError{delay: d, failure: true, reason: reason, err: err}
}

// RetryLong is Retry for waits of minutes or hours, such as a status
// callback's next attempt: the task goes to asynq's retry set with d as
// its delay and no promotion, so asynq's forwarder makes it pending
// (within about 20 s of its time, at the tail of its queue) and a shutdown
// does not hand it over early, as it does the promoter's tasks.
func RetryLong(d time.Duration, reason string, err error) error {
	return &laterError{delay: d, failure: true, reason: reason, err: err, unpromoted: true}
}

// Archive stops retrying: asynq archives the task with "<reason>: <err>; not
// retried" as its last error, which the web UI shows.
func Archive(reason string, err error) error { return &archivedError{reason: reason, err: err} }

// later reports the delay of a Snooze, Retry or RetryLong outcome, and
// whether the task waits for the promoter.
func later(err error) (d time.Duration, promote, ok bool) {
	var l *laterError
	if errors.As(err, &l) {
		return l.delay, !l.unpromoted, true
	}
	return 0, false, false
}

// promoted reports the delay of a Snooze or Retry outcome, whose task the
// promoter makes pending.
func promoted(err error) (time.Duration, bool) {
	d, promote, ok := later(err)
	return d, ok && promote
}

// laterError is the outcome of Snooze, Retry and RetryLong.
type laterError struct {
	delay      time.Duration
	failure    bool
	reason     string
	err        error
	unpromoted bool // RetryLong: asynq's forwarder moves it
}

func (e *laterError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("%s (next attempt in %s): %v", e.reason, e.delay.Round(time.Millisecond), e.err)
	}
	return fmt.Sprintf("%s (next attempt in %s)", e.reason, e.delay.Round(time.Millisecond))
}

func (e *laterError) Unwrap() error { return e.err }

// archivedError is the outcome of Archive; it wraps asynq.SkipRetry.
type archivedError struct {
	reason string
	err    error
}

func (e *archivedError) Error() string { return fmt.Sprintf("%s: %v; not retried", e.reason, e.err) }

func (e *archivedError) Unwrap() []error { return []error{e.err, asynq.SkipRetry} }

// isFailure is asynq's IsFailure: a snooze is not a failure.
func isFailure(err error) bool {
	var l *laterError
	if errors.As(err, &l) {
		return l.failure
	}
	return true
}

// retryDelay is asynq's RetryDelayFunc. For Snooze and Retry the promoter
// has the exact time; asynq's own retry is the backstop.
func retryDelay(n int, err error, t *asynq.Task) time.Duration {
	if d, promote, ok := later(err); ok {
		if !promote {
			return d
		}
		return backstopDelay(d)
	}
	if errors.Is(err, asynq.ErrLeaseExpired) {
		// asynq's recoverer found the task of a worker that died, after its
		// lease ended: run it again at once (a handler records what it has
		// done, so a finished step is not repeated).
		return time.Second
	}
	return asynq.DefaultRetryDelayFunc(n, err, t)
}
