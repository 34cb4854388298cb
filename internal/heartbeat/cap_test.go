package heartbeat

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// TestHeartbeatCap fills a deployment to MaxHeartbeats with concurrent
// first pings (the cap is checked inside the ping script, so racing
// producers cannot overshoot it): the ones over the cap get a 409 naming
// the setting, existing heartbeats still ping, and a deleted one frees a
// place.
func TestHeartbeatCap(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOpts{tweak: func(c *Config) { c.MaxHeartbeats = 5 }})
	const tries = 12
	codes := make([]int, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Go(func() {
			codes[i] = do(h.handler, http.MethodPut, fmt.Sprintf("/v1/heartbeats/job-%d?interval=1h", i), "", "").Code
		})
	}
	wg.Wait()
	created, refused := 0, 0
	for _, c := range codes {
		switch c {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
			refused++
		default:
			t.Fatalf("first ping answered %d; codes %v", c, codes)
		}
	}
	if created != 5 || refused != tries-5 {
		t.Fatalf("%d created and %d refused, want 5 and %d (codes %v)", created, refused, tries-5, codes)
	}
	if n, err := h.rdb.HLen(t.Context(), hbKeys[0]).Result(); err != nil || n != 5 {
		t.Fatalf("%d heartbeats stored (%v), want 5", n, err)
	}

	w := do(h.handler, http.MethodPut, "/v1/heartbeats/one-more?interval=1h", "", "")
	if w.Code != http.StatusConflict {
		t.Fatalf("ping over the cap: %d, want 409", w.Code)
	}
	if eb := errorBody(t, w); eb.Error.Code != codeTooManyHeartbeats {
		t.Fatalf("error %+v, want code %s", eb.Error, codeTooManyHeartbeats)
	}
	var existing string
	for i, c := range codes {
		if c == http.StatusCreated {
			existing = fmt.Sprintf("job-%d", i)
			break
		}
	}
	mustPing(t, h.handler, "/v1/heartbeats/"+existing, "", http.StatusOK)
	if w := do(h.handler, http.MethodDelete, "/v1/heartbeats/"+existing, "", ""); w.Code >= 300 {
		t.Fatalf("DELETE: %d %s", w.Code, w.Body)
	}
	mustPing(t, h.handler, "/v1/heartbeats/one-more?interval=1h", "", http.StatusCreated)
}
