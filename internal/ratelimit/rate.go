package ratelimit

import "time"

// Rate is the most sends per second the limit lets through in the long
// run: the tightest of its windows' N per span. It is 0 for a limit that
// has no windows (off, or unset): nothing bounds the rate.
func (l Limit) Rate() float64 {
	var r float64
	for _, w := range l {
		if w.Per <= 0 {
			continue
		}
		if wr := float64(w.N) / w.Per.Seconds(); r == 0 || wr < r {
			r = wr
		}
	}
	return r
}

// Spacing is the time the limit puts between sends in the long run, 1/Rate
// (0 when the limit has no windows).
func (l Limit) Spacing() time.Duration {
	r := l.Rate()
	if r <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / r)
}
