package worker

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// stopWatch wakes the messages this process holds waiting in memory for a
// slot when a cancel is published (keys.StopChannel), so that they look at
// their marks now rather than when their slots come, which may be minutes
// away for a broadcast: a cancelled broadcast's counts settle in seconds.
// A notice that is missed (a reconnect) only delays that: the marks are
// checked again at every slot, so nothing is ever sent because of it.
type stopWatch struct {
	rdb redis.UniversalClient

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at each notice

	sub  *redis.PubSub
	done chan struct{}
}

func newStopWatch(rdb redis.UniversalClient) *stopWatch {
	return &stopWatch{rdb: rdb, changed: make(chan struct{})}
}

// notices returns a channel that is closed at the next notice.
func (w *stopWatch) notices() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

// notify wakes everyone waiting on notices.
func (w *stopWatch) notify() {
	w.mu.Lock()
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

// Start subscribes; the subscription reconnects by itself.
func (w *stopWatch) Start(ctx context.Context) error {
	w.sub = w.rdb.Subscribe(context.WithoutCancel(ctx), keys.StopChannel())
	w.done = make(chan struct{})
	ch := w.sub.Channel()
	go func() {
		defer close(w.done)
		for range ch {
			w.notify()
		}
	}()
	return nil
}

// Shutdown unsubscribes and waits for the loop to end.
func (w *stopWatch) Shutdown() {
	if w.sub == nil {
		return
	}
	_ = w.sub.Close()
	<-w.done
}
