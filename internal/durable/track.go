package durable

import (
	"context"
	"sync"
)

// writes lists keys written during one request, one per hash slot is
// enough; only a cluster client looks at them.
type writes struct {
	mu   sync.Mutex
	keys []string
}

type writesKey struct{}

// Track returns a context that records the keys passed to Wrote, for a
// later Wait on the same context. Tracking again keeps the first record.
func Track(ctx context.Context) context.Context {
	if _, ok := ctx.Value(writesKey{}).(*writes); ok {
		return ctx
	}
	return context.WithValue(ctx, writesKey{}, &writes{})
}

// Wrote records that a key of key's hash slot was written under ctx (a
// no-op without Track). Code that writes where a caller may want to
// confirm the write calls it: the enqueue path for the queue's keys and
// Herald's own.
func Wrote(ctx context.Context, key string) {
	w, ok := ctx.Value(writesKey{}).(*writes)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range w.keys {
		if k == key {
			return
		}
	}
	w.keys = append(w.keys, key)
}

// recorded returns the keys Wrote recorded under ctx.
func recorded(ctx context.Context) []string {
	w, ok := ctx.Value(writesKey{}).(*writes)
	if !ok {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.keys...)
}
