package app

import (
	"reflect"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/settings"
)

func TestLimitsDefaults(t *testing.T) {
	t.Parallel()
	w, err := settings.LoadWorker(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := Limits(w.Limits)
	want := ratelimit.Config{
		Bot:            ratelimit.Per(30, time.Second),
		Private:        ratelimit.Per(1, time.Second),
		Group:          ratelimit.Per(1, time.Second).And(ratelimit.Per(20, time.Minute)),
		PriorityQueues: []string{"critical"},
		Priority:       ratelimit.Per(3, time.Second),
		Guard:          20 * time.Millisecond,
		BotPauseMax:    10 * time.Second,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Limits(defaults) =\n%+v\nwant\n%+v", got, want)
	}
	// The limiter's own defaults agree with the configured ones.
	if d := (ratelimit.Config{PriorityQueues: []string{"critical"}, Priority: want.Priority}).WithDefaults(); !reflect.DeepEqual(d, want.WithDefaults()) {
		t.Errorf("ratelimit defaults %+v differ from config defaults %+v", d, want.WithDefaults())
	}
}

func TestLimitsOff(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"HERALD_LIMIT_BOT":      "off",
		"HERALD_LIMIT_PRIORITY": "off",
		"HERALD_LIMIT_QUEUES":   "low=off,default=20/s+100/m",
		"HERALD_LIMIT_GUARD":    "0s",
		"HERALD_PAUSE_BOT_MAX":  "off",
	}
	w, err := settings.LoadWorker(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	got := Limits(w.Limits)
	if got.Bot == nil || len(got.Bot) != 0 {
		t.Errorf("Bot = %#v, want ratelimit.Unlimited", got.Bot)
	}
	if got.Priority != nil {
		t.Errorf("Priority = %#v, want nil (off)", got.Priority)
	}
	if want := map[string]ratelimit.Limit{"default": ratelimit.Per(20, time.Second).And(ratelimit.Per(100, time.Minute))}; !reflect.DeepEqual(got.Queues, want) {
		t.Errorf("Queues = %v, want %v", got.Queues, want)
	}
	if got.Guard <= 0 || got.Guard >= time.Microsecond {
		t.Errorf("Guard = %v, want a positive guard below the limiter's microsecond", got.Guard)
	}
	if got.BotPauseMax >= 0 {
		t.Errorf("BotPauseMax = %v, want negative (chat-only pause)", got.BotPauseMax)
	}
	if d := got.WithDefaults(); d.Guard != got.Guard || d.BotPauseMax != got.BotPauseMax || len(d.Bot) != 0 {
		t.Errorf("the limiter's defaults undo the settings: %+v", d)
	}
}
