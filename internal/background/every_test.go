package background_test

import (
	"context"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/background"
)

// Jitter stays within ± 20% and is not constant.
func TestJitter(t *testing.T) {
	d := 100 * time.Millisecond
	seen := map[time.Duration]bool{}
	for range 1000 {
		j := background.Jitter(d)
		if j < 80*time.Millisecond || j > 120*time.Millisecond {
			t.Fatalf("Jitter(%v) = %v, outside ± 20%%", d, j)
		}
		seen[j] = true
	}
	if len(seen) < 2 {
		t.Fatal("Jitter returned one value 1000 times")
	}
	if j := background.Jitter(0); j != 0 {
		t.Fatalf("Jitter(0) = %v", j)
	}
}

// Every calls fn after first and again after each interval, and not
// after its context ends.
func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := make(chan time.Time, 100)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		background.Every(ctx, 0, 5*time.Millisecond, func() {
			calls <- time.Now()
			if len(calls) == 3 {
				cancel()
			}
		})
	}()
	<-done
	n := len(calls)
	if n != 3 {
		t.Fatalf("%d calls after the context ended at the third, want 3", n)
	}
	first := <-calls
	if first.Sub(start) > time.Second {
		t.Fatalf("first call after %v, want at once (first = 0)", first.Sub(start))
	}
}

// Every with a context already ended calls nothing.
func TestEveryEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	background.Every(ctx, time.Hour, time.Hour, func() { called = true })
	if called {
		t.Fatal("fn called on an ended context")
	}
}
