package worker

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/telegram"
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
// delay and scheduled an exact promotion; asynq's forwarder is the backstop
// (broker.BackstopDelay).
func retryDelay(n int, err error, t *asynq.Task) time.Duration {
	var l *laterError
	if errors.As(err, &l) {
		return broker.BackstopDelay(l.Delay)
	}
	if errors.Is(err, asynq.ErrLeaseExpired) {
		// asynq's recoverer found the task of a worker that died. It has
		// already waited out the lease; send it again at once (a send that
		// had completed is recorded and will not be repeated).
		return time.Second
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

// archivedError archives the task at once (it wraps asynq.SkipRetry). Its
// text is what the web UI shows as the task's last error: the reason first,
// then Telegram's own words.
type archivedError struct {
	reason string
	err    error
}

func (e *archivedError) Error() string {
	if tg, ok := e.err.(*telegram.Error); ok && tg.Description != "" {
		if tg.Code != 0 {
			return fmt.Sprintf("%s: %s (Telegram error %d); not retried", e.reason, tg.Description, tg.Code)
		}
		return fmt.Sprintf("%s: %s; not retried", e.reason, tg.Description)
	}
	return fmt.Sprintf("%s: %v; not retried", e.reason, e.err)
}

func (e *archivedError) Unwrap() []error { return []error{e.err, asynq.SkipRetry} }

// permanent archives the task at once with reason in its error text.
func permanent(reason string, err error) error { return &archivedError{reason: reason, err: err} }
