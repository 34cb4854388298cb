package telegramfake

import (
	"math"
	"time"
)

// toReal converts a span of Telegram time into real time under scale. It
// rounds down, so limits measured with it never outlast their Telegram-time
// length.
func toReal(d time.Duration, scale float64) time.Duration {
	if d <= 0 {
		return 0
	}
	r := time.Duration(float64(d) / scale)
	if r < 1 {
		r = 1
	}
	return r
}

// retryUnit is the real length of one Telegram second under scale, rounded
// up to whole nanoseconds.
func retryUnit(scale float64) time.Duration {
	u := time.Duration(math.Ceil(float64(time.Second) / scale))
	if u < 1 {
		u = 1
	}
	return u
}

// RetryAfterUnit is how long one second of retry_after lasts in real time:
// time.Second divided by Config.TimeScale, rounded up to a nanosecond. A
// client that waits retry_after × RetryAfterUnit(), or retry_after /
// TimeScale seconds, after a 429 is never early.
func (s *Server) RetryAfterUnit() time.Duration { return s.unit }

// retryAfterSeconds turns a real-time wait into the whole number of Telegram
// seconds reported in retry_after.
func (s *Server) retryAfterSeconds(wait time.Duration) int {
	return retryAfterSeconds(wait, s.unit, s.cfg.TimeScale)
}

// retryAfterSeconds turns a real-time wait into whole Telegram seconds under
// scale, whose second lasts unit: never below 1, as on Telegram, and rounded
// up so that both retry_after × unit and retry_after / scale seconds cover
// the wait.
func retryAfterSeconds(wait, unit time.Duration, scale float64) int {
	n := (wait + unit - 1) / unit
	if n < 1 {
		n = 1
	}
	for float64(n)*float64(time.Second)/scale < float64(wait) {
		n++
	}
	return int(n)
}
