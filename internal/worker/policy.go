package worker

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hibiken/asynq"
)

// laterError puts a task back for Delay. Failure says whether the attempt
// counts against the task's retry budget: rate-limit waits and 429s do not.
type laterError struct {
	Delay   time.Duration
	Failure bool
	Reason  string
	Err     error
}

func (e *laterError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s (next attempt in %s): %v", e.Reason, e.Delay.Round(time.Millisecond), e.Err)
	}
	return fmt.Sprintf("%s (next attempt in %s)", e.Reason, e.Delay.Round(time.Millisecond))
}

func (e *laterError) Unwrap() error { return e.Err }

// isFailure is asynq's IsFailure: deferrals do not count as failures.
func isFailure(err error) bool {
	var l *laterError
	if errors.As(err, &l) {
		return l.Failure
	}
	return true
}

// retryDelay is asynq's RetryDelayFunc. The handler has already decided the
// delay and scheduled an exact promotion; the retry score asynq stores has
// one-second resolution, so one second is added to keep asynq's forwarder
// from moving the task before its slot (it only acts if this process dies).
func retryDelay(n int, err error, t *asynq.Task) time.Duration {
	var l *laterError
	if errors.As(err, &l) {
		return l.Delay + time.Second
	}
	return asynq.DefaultRetryDelayFunc(n, err, t)
}

// backoff is exponential with full jitter: uniform in [base/2, min(cap, base*2^n)].
func backoff(n int, base, cap time.Duration) time.Duration {
	d := base
	for i := 0; i < n && d < cap; i++ {
		d *= 2
	}
	if d > cap {
		d = cap
	}
	lo := base / 2
	if d <= lo {
		return d
	}
	return lo + rand.N(d-lo)
}

// permanent archives the task at once with reason in its error text.
func permanent(reason string, err error) error {
	return fmt.Errorf("%s: %w: %w", reason, err, asynq.SkipRetry)
}
