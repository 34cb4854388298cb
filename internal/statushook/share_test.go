package statushook_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/statushook"
)

// TestHangingReceiverKeepsToItsShare: 300 events to a receiver that never
// answers hold at most a quarter of the deliverer's goroutines; another
// endpoint's event, emitted after them, is delivered while every one of
// the hanging posts is still waiting for its answer.
func TestHangingReceiverKeepsToItsShare(t *testing.T) {
	r := newRig(t, func(c *statushook.Config) { c.Timeout = 40 * time.Second; c.Concurrency = 32 })
	release := make(chan struct{})
	hanging := newReceiver(t, func(_ int, w http.ResponseWriter) { <-release })
	t.Cleanup(func() { close(release) })
	healthy := newReceiver(t, nil)
	for i := range 300 {
		r.emit(hanging.URL+"/a", fmt.Sprintf("a-%d", i))
	}
	r.startDeliverer()
	r.eventually("the hanging receiver holds its share", func() bool { return hanging.count() == 32/4 })
	sent := time.Now()
	r.emit(healthy.URL+"/b", "b-1")
	r.eventually("the other endpoint's event is delivered", func() bool { return r.deliveries("delivered") == 1 })
	t.Logf("the other endpoint's callback arrived %s after its emit; the hanging receiver got %d posts",
		healthy.requests()[0].at.Sub(sent).Round(time.Millisecond), hanging.count())
	if n := hanging.count(); n != 32/4 {
		t.Fatalf("the hanging receiver got %d posts at once, want its share, %d", n, 32/4)
	}
	if r.deliveries("endpoint_busy") == 0 {
		t.Fatal("no event was handed back for a busy endpoint")
	}
}
