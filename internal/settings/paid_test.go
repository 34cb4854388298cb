package settings

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/worker"
)

// TestLoadPaidBroadcasts: the default bot's paid broadcasts come from
// HERALD_PAID_*, every other bot's from HERALD_BOT_<NAME>_PAID_*, with the
// documented defaults.
func TestLoadPaidBroadcasts(t *testing.T) {
	t.Parallel()
	w, err := LoadWorker(nil, envOf(map[string]string{
		EnvBots: "default,news,ops", "HERALD_PAID_BROADCAST": "true", "HERALD_PAID_BUDGET": "500",
		"HERALD_BOT_NEWS_PAID_BROADCAST": "true", "HERALD_BOT_NEWS_PAID_LIMIT": "500/s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Worker.Paid; !got.On || got.Budget != 500 || !reflect.DeepEqual(got.Limit, worker.DefaultPaidLimit) {
		t.Errorf("default bot's paid broadcasts %+v", got)
	}
	want := map[string]worker.PaidBroadcast{"news": {On: true, Limit: ratelimit.Per(500, time.Second)}}
	if !reflect.DeepEqual(w.Worker.BotPaid, want) {
		t.Errorf("other bots' paid broadcasts %+v, want %+v", w.Worker.BotPaid, want)
	}
	for _, s := range []string{"HERALD_PAID_LIMIT=1000/s", "HERALD_BOT_NEWS_PAID_LIMIT=500/s", "HERALD_BOT_NEWS_PAID_BROADCAST=true"} {
		if !strings.Contains(w.String(), s) {
			t.Errorf("String() lacks %s:\n%s", s, w.String())
		}
	}
	def, err := LoadWorker(nil, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if def.Worker.Paid.On || def.Worker.BotPaid != nil {
		t.Errorf("paid broadcasts on by default: %+v %+v", def.Worker.Paid, def.Worker.BotPaid)
	}
}

// TestPaidBroadcastProblems: each problem names its variable and the fix.
func TestPaidBroadcastProblems(t *testing.T) {
	t.Parallel()
	cases := []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{"HERALD_PAID_BROADCAST": "true", "HERALD_PAID_LIMIT": "2000/s"},
			[]string{"HERALD_PAID_LIMIT", "above Telegram's cap of 1000", "at most 1000/s"}},
		{map[string]string{"HERALD_PAID_BROADCAST": "true", "HERALD_PAID_LIMIT": "off"},
			[]string{"HERALD_PAID_LIMIT", "HERALD_PAID_BROADCAST=false"}},
		{map[string]string{"HERALD_PAID_BROADCAST": "true", "HERALD_PAID_BUDGET": "-1"}, []string{"HERALD_PAID_BUDGET", "must be 0"}},
		{map[string]string{"HERALD_PAID_BROADCAST": "maybe"}, []string{"HERALD_PAID_BROADCAST"}},
		{map[string]string{EnvBots: "news", "HERALD_PAID_BROADCAST": "true"}, []string{"HERALD_PAID_BROADCAST", "HERALD_BOTS"}},
		{map[string]string{EnvBots: "news", "HERALD_BOT_NEWS_PAID_BROADCAST": "true", "HERALD_BOT_NEWS_PAID_LIMIT": "1001/s"},
			[]string{"HERALD_BOT_NEWS_PAID_LIMIT", "above Telegram's cap"}},
		{map[string]string{EnvBots: "news", "HERALD_BOT_NEWS_PAID_BUDGET": "lots"}, []string{"HERALD_BOT_NEWS_PAID_BUDGET"}},
		{map[string]string{"HERALD_BOT_DEFAULT_PAID_BROADCAST": "true"}, []string{"HERALD_BOT_DEFAULT_PAID_BROADCAST", "HERALD_PAID_BROADCAST"}},
	}
	for _, tc := range cases {
		_, err := LoadWorker(nil, envOf(tc.env))
		if err == nil {
			t.Errorf("%v: accepted", tc.env)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v lacks %q", tc.env, err, w)
			}
		}
	}
	// The cap counts in the fake's seconds when retry_after's are shorter.
	if _, err := LoadWorker(nil, envOf(map[string]string{"HERALD_PAID_BROADCAST": "true", "HERALD_PAID_LIMIT": "100/100ms",
		"TELEGRAM_RETRY_AFTER_UNIT": "100ms"})); err != nil {
		t.Errorf("1000 per scaled second: %v", err)
	}
}
