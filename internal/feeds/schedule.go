package feeds

import (
	"container/heap"
	"crypto/sha256"
	"encoding/binary"
	"time"

	expbackoff "github.com/herald-dev/herald/internal/backoff"
)

// firstOffset is how long after start a feed is first polled: a fixed
// point in [0, interval) derived from the feed's name, so that feeds spread
// evenly over their interval, and every replica and restart agrees on it.
func firstOffset(name string, interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	sum := sha256.Sum256([]byte("herald-feed-offset/" + name))
	return time.Duration(binary.BigEndian.Uint64(sum[:8]) % uint64(interval))
}

// backoff is the wait after the n-th failure in a row (n >= 1): the
// interval, doubled for each further failure, capped at ceiling (or at the
// interval when that is longer).
func backoff(interval, ceiling time.Duration, n int) time.Duration {
	ceiling = max(ceiling, interval)
	if interval <= 0 {
		return ceiling
	}
	return expbackoff.Exp(interval, ceiling, n-1)
}

// slot is one feed in the scheduler.
type slot struct {
	feed feed
	// due is when the feed is next polled.
	due time.Time
	// failures counts failed polls in a row.
	failures int
}

// agenda is a min-heap of slots by due time (container/heap).
type agenda []*slot

func (a agenda) Len() int { return len(a) }
func (a agenda) Less(i, j int) bool {
	if a[i].due.Equal(a[j].due) {
		return a[i].feed.Name < a[j].feed.Name
	}
	return a[i].due.Before(a[j].due)
}
func (a agenda) Swap(i, j int) { a[i], a[j] = a[j], a[i] }
func (a *agenda) Push(x any)   { *a = append(*a, x.(*slot)) }
func (a *agenda) Pop() any {
	old := *a
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*a = old[:len(old)-1]
	return s
}

// newAgenda schedules every feed's first poll at start plus its offset.
func newAgenda(feeds []feed, start time.Time) *agenda {
	a := make(agenda, 0, len(feeds))
	for _, fd := range feeds {
		a = append(a, &slot{feed: fd, due: start.Add(firstOffset(fd.Name, fd.Interval))})
	}
	heap.Init(&a)
	return &a
}
