package worker_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// TestBotsKeepTheirOwnLimits: one worker serves two bots; a 429 flood wait
// on one of them holds back that bot's messages only, and each bot's
// limiter state lives under its own hash tag.
func TestBotsKeepTheirOwnLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, options{bots: []string{"pages", "status"}})
	// Telegram answers every request of "pages" 429 with a 2 s flood wait
	// .
	b.fake.Force429(2*time.Second, "pages")
	floodStart := time.Now()
	const each = 10
	for i := range each {
		for _, bot := range []string{"pages", "status"} {
			// Private chats, one message each: only the bot-wide limits bind.
			b.send(t, jobs.SendMessage{Bot: bot, Chat: fmt.Sprint(1000 + i), Text: bot + " " + fmt.Sprint(i)}, "default")
		}
	}
	if err := b.fake.Wait(b.ctx, 2*each); err != nil {
		t.Fatalf("waiting for both bots' messages: %v (stats %+v)", err, b.fake.Stats())
	}
	st := b.fake.Stats()
	if got := st.Bots["status"].TooMany; got != 0 {
		t.Errorf("status met %d 429s; only pages was flooded", got)
	}
	if got := st.Bots["pages"].TooMany; got == 0 {
		t.Errorf("pages met no 429: the flood wait was not exercised")
	}
	// Every status message went out during pages' flood wait, before the
	// first of pages' messages.
	var lastStatus, firstPages time.Time
	for _, m := range b.fake.Messages() {
		switch m.Bot {
		case "status":
			if m.At.After(lastStatus) {
				lastStatus = m.At
			}
		case "pages":
			if firstPages.IsZero() || m.At.Before(firstPages) {
				firstPages = m.At
			}
		}
	}
	if !lastStatus.Before(firstPages) {
		t.Errorf("status' last message at %v, pages' first at %v (flood from %v): pages' pause held status back",
			lastStatus.Sub(floodStart), firstPages.Sub(floodStart), floodStart)
	}
	if n := b.counter(t, "herald_messages_sent_total", map[string]string{"bot": "status"}); n != each {
		t.Errorf("herald_messages_sent_total{bot=status} = %v, want %d", n, each)
	}
	if n := b.counter(t, "herald_telegram_429_total", map[string]string{"bot": "pages"}); n == 0 {
		t.Errorf("herald_telegram_429_total{bot=pages} = 0")
	}
	for _, bot := range []string{"pages", "status"} {
		if n := b.rdb.Exists(b.ctx, keys.Bot(bot).BotLog()).Val(); n != 1 {
			t.Errorf("%s has no bot-wide log at %s", bot, keys.Bot(bot).BotLog())
		}
	}
	if n := b.rdb.Exists(b.ctx, keys.Bot(keys.DefaultBot).BotLog()).Val(); n != 0 {
		t.Errorf("the default bot's log exists, though no message went to it")
	}
}

// TestUnauthorizedBotStopsOnlyItself: a revoked token (Telegram's 401) makes
// that bot's tasks retry with their reason, while the other bot delivers;
// the token appears nowhere in Redis.
func TestUnauthorizedBotStopsOnlyItself(t *testing.T) {
	t.Parallel()
	const wrong = "299999999:revoked-status-token"
	b := setup(t, options{bots: []string{"pages", "status"}, workerTokens: map[string]string{"status": wrong}})
	bad := b.send(t, jobs.SendMessage{Bot: "status", Chat: "42", Text: "to status"}, "default")
	for i := range 5 {
		b.send(t, jobs.SendMessage{Bot: "pages", Chat: fmt.Sprint(100 + i), Text: "to pages"}, "default")
	}
	if err := b.fake.Wait(b.ctx, 5); err != nil {
		t.Fatalf("pages' messages: %v", err)
	}
	info := b.waitTask(t, "default", bad.TaskID, func(i *asynq.TaskInfo) bool {
		return i.State == asynq.TaskStateRetry || i.State == asynq.TaskStateScheduled
	})
	if !strings.Contains(strings.ToLower(info.LastErr), "unauthorized") {
		t.Errorf("status' task error %q does not name the 401", info.LastErr)
	}
	if got := len(b.fake.MessagesOf("status")); got != 0 {
		t.Errorf("status delivered %d messages with a revoked token", got)
	}
	if n := b.counter(t, "herald_retries_total", map[string]string{"bot": "status", "reason": "unauthorized"}); n == 0 {
		t.Errorf("herald_retries_total{bot=status,reason=unauthorized} = 0")
	}
	if dump := dumpRedis(t, b.rdb); strings.Contains(dump, "revoked-status-token") || strings.Contains(dump, "pages-token") {
		t.Errorf("a bot token is stored in Redis")
	}
	if logs := b.logs.String(); strings.Contains(logs, "revoked-status-token") || strings.Contains(logs, "pages-token") {
		t.Errorf("a bot token is in the logs")
	}
}

// TestUnknownBotIsRetried: a task for a bot this worker does not serve (a
// fleet mid-rollout) is retried with a reason naming the bots it serves,
// never dropped and never sent by another bot.
func TestUnknownBotIsRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, options{bots: []string{"pages"}})
	res := b.send(t, jobs.SendMessage{Bot: "status", Chat: "42", Text: "for a bot not served here"}, "default")
	info := b.waitTask(t, "default", res.TaskID, func(i *asynq.TaskInfo) bool {
		return i.State == asynq.TaskStateRetry && i.LastErr != ""
	})
	if !strings.Contains(info.LastErr, `"status"`) || !strings.Contains(info.LastErr, "pages") {
		t.Errorf("task error %q should name the bot and the bots served", info.LastErr)
	}
	if n := len(b.fake.Messages()); n != 0 {
		t.Errorf("%d messages sent for a bot the worker does not serve", n)
	}
	if n := b.counter(t, "herald_retries_total", map[string]string{"reason": "unknown_bot"}); n == 0 {
		t.Errorf("herald_retries_total{reason=unknown_bot} = 0")
	}
	_ = telegramfake.DefaultBot
}
