package background_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/background"
)

// A Group runs each function once, refuses a second Start, and Shutdown
// returns only after every function has returned.
func TestGroupStartsOnceAndWaits(t *testing.T) {
	var g background.Group
	var running, finished atomic.Int32
	release := make(chan struct{})
	fn := func(ctx context.Context) {
		running.Add(1)
		<-ctx.Done()
		<-release // a pass under way
		finished.Add(1)
	}
	if err := g.Start(context.Background(), fn, fn); err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background(), fn); !errors.Is(err, background.ErrStarted) {
		t.Fatalf("second Start: %v, want ErrStarted", err)
	}
	for running.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	stopped := make(chan struct{})
	go func() { g.Shutdown(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("Shutdown returned while a pass was under way")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-stopped
	if n := finished.Load(); n != 2 {
		t.Fatalf("%d functions finished, want 2", n)
	}
	g.Shutdown() // again: returns at once
	if err := g.Start(context.Background(), fn); !errors.Is(err, background.ErrStarted) {
		t.Fatalf("Start after Shutdown: %v, want ErrStarted", err)
	}
}

// Shutdown before Start returns, and the end of Start's context ends the
// functions as Shutdown would.
func TestGroupShutdownBeforeStartAndParentContext(t *testing.T) {
	var g background.Group
	g.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	if err := g.Start(ctx, func(ctx context.Context) { <-ctx.Done(); close(done) }); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	g.Shutdown()
}
