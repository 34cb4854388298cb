package feeds

import "time"

// clock is the poller's source of time. Tests substitute a fake one to run
// hours of schedule without waiting.
type clock interface {
	Now() time.Time
	NewTimer(d time.Duration) timer
}

// timer is the part of *time.Timer the scheduler uses.
type timer interface {
	C() <-chan time.Time
	Stop() bool
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }
