package background

import (
	"context"
	"errors"
	"sync"
)

// ErrStarted is Start's error on a Group started before (even if stopped
// since): a component runs once. Callers wrap it with their name, as
// fmt.Errorf("heartbeat: checker %w", err).
var ErrStarted = errors.New("already started")

// Group runs a component's goroutines from Start until Shutdown or the end
// of Start's context. The zero Group is ready to use; it must not be
// copied after Start.
type Group struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start runs each of fns in a goroutine of its own, on a context that ends
// with ctx or at Shutdown, and returns at once. A second Start returns
// ErrStarted and runs nothing.
func (g *Group) Start(ctx context.Context, fns ...func(context.Context)) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cancel != nil {
		return ErrStarted
	}
	ctx, g.cancel = context.WithCancel(ctx)
	for _, fn := range fns {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			fn(ctx)
		}()
	}
	return nil
}

// Shutdown ends the goroutines' context and waits for them to return. It
// may be called more than once, and before Start.
func (g *Group) Shutdown() {
	g.mu.Lock()
	cancel := g.cancel
	g.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	g.wg.Wait()
}
