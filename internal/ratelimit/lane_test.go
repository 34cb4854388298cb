package ratelimit_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
)

// TestLaneLeavesRoomForOtherQueues: 50 broadcast messages to 50 chats ask
// at once under a bot-wide 10 per second. As a lane, the broadcast takes
// queue turns at 9 of every 10, so it holds bot-wide slots for about a
// second ahead, not five, and a default message asked after them gets a
// slot within that second. Without the lane it waits behind the whole
// broadcast.
func TestLaneLeavesRoomForOtherQueues(t *testing.T) {
	t.Parallel()
	for _, lane := range []bool{true, false} {
		cfg := ratelimit.Config{Bot: ratelimit.Per(10, time.Second), Private: ratelimit.Per(1, time.Second),
			Group: ratelimit.Unlimited, SleepMax: 50 * time.Millisecond, Guard: 2 * time.Millisecond}
		if lane {
			cfg.Lanes = []string{"broadcast"}
		}
		b := setup(t, cfg)
		var last time.Duration
		for i := range 50 {
			_, at := b.acquire(t, strconv.Itoa(1000+i), "broadcast", "b"+strconv.Itoa(i))
			last = max(last, at)
		}
		d, at := b.acquire(t, "7", "default", "alert")
		t.Logf("lane=%v: the broadcast's last slot or turn in %v; the default message's slot in %v (%v)", lane, last, at, d.Kind)
		switch {
		case lane && at > 1200*time.Millisecond:
			t.Errorf("with the lane, the default message waits %v; want its slot within about a second", at)
		case !lane && at < 4*time.Second:
			t.Errorf("without the lane, the default message waits %v; the test expects it behind the broadcast's 5 s", at)
		}
		if lane && last < 4500*time.Millisecond {
			t.Errorf("the lane's 50 messages end in %v; at 9 per second they take about 5 s", last)
		}
	}
}
