package worker_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
)

func TestDeliversEveryField(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.send(t, jobs.SendMessage{
		Chat: "-1001234567890", Text: "<b>disk</b> full on db-1", ParseMode: "HTML",
		DisableNotification: true, MessageThreadID: 7, DisableLinkPreview: true, ProtectContent: true,
	}, "critical")
	if err := b.fake.Wait(b.ctx, 1); err != nil {
		t.Fatal(err)
	}
	m := b.fake.Messages()[0]
	if m.ChatID != -1001234567890 || m.Text != "<b>disk</b> full on db-1" || m.ParseMode != "HTML" ||
		!m.DisableNotification || m.MessageThreadID != 7 || !m.LinkPreviewDisabled || !m.ProtectContent {
		t.Fatalf("delivered message differs from the request: %+v", m)
	}
}

func TestTooManyRequestsWaitsAndDelivers(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.fake.FailNext(1, telegramfake.FaultTooMany)
	res := b.send(t, jobs.SendMessage{Chat: "42", Text: "after a 429"}, "")
	if err := b.fake.Wait(b.ctx, 1); err != nil {
		t.Fatal(err)
	}
	b.waitGone(t, res.Queue, res.TaskID)
	if got := b.fake.Stats().TooMany; got != 1 {
		t.Fatalf("fake answered %d 429s, want exactly the injected one", got)
	}
	q, err := b.insp.GetQueueInfo(res.Queue)
	if err != nil {
		t.Fatal(err)
	}
	if q.Failed != 0 || q.Archived != 0 {
		t.Fatalf("a 429 must not count as a failure nor archive: failed=%d archived=%d", q.Failed, q.Archived)
	}
	if got := b.counter(t, "herald_telegram_429_total", nil); got != 1 {
		t.Fatalf("herald_telegram_429_total = %v, want 1", got)
	}
}

func TestPermanentErrorsArchiveWithReason(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	cases := []struct {
		chat   string
		setup  telegramfake.ChatBehavior
		reason string
	}{
		{"501", telegramfake.ChatBehavior{Blocked: true}, "blocked"},
		{"-1009001", telegramfake.ChatBehavior{Kicked: true}, "kicked"},
		{"502", telegramfake.ChatBehavior{NotFound: true}, "chat_not_found"},
	}
	for _, c := range cases {
		b.fake.SetChat(c.chat, c.setup)
		res := b.send(t, jobs.SendMessage{Chat: c.chat, Text: "hello"}, "")
		info := b.waitTask(t, res.Queue, res.TaskID, func(i *asynq.TaskInfo) bool { return i.State == asynq.TaskStateArchived })
		if !strings.Contains(info.LastErr, c.reason) {
			t.Errorf("chat %s: archived with %q, want the reason %q in it", c.chat, info.LastErr, c.reason)
		}
		if info.Retried != 0 {
			t.Errorf("chat %s: permanent error was retried %d times", c.chat, info.Retried)
		}
	}
	if n := b.rdb.XLen(b.ctx, keys.Failures()).Val(); n != int64(len(cases)) {
		t.Fatalf("failure log holds %d entries, want %d", n, len(cases))
	}
	if len(b.fake.Messages()) != 0 {
		t.Fatal("nothing should have been delivered")
	}
}

func TestMigratedChatIsFollowedAndRemembered(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.fake.SetChat("-4001", telegramfake.ChatBehavior{MigrateTo: -1004001})
	b.send(t, jobs.SendMessage{Chat: "-4001", Text: "first"}, "")
	if err := b.fake.Wait(b.ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := b.rdb.HGet(b.ctx, keys.Bot("").Migrations(), "-4001").Val(); got != "-1004001" {
		t.Fatalf("migration not remembered: %q", got)
	}
	before := b.fake.Stats().Rejected
	b.send(t, jobs.SendMessage{Chat: "-4001", Text: "second"}, "")
	if err := b.fake.Wait(b.ctx, 2); err != nil {
		t.Fatal(err)
	}
	for _, m := range b.fake.Messages() {
		if m.ChatID != -1004001 {
			t.Fatalf("message delivered to %d, want the supergroup -1004001", m.ChatID)
		}
	}
	if after := b.fake.Stats().Rejected; after != before {
		t.Fatalf("the second message went to the old chat first (%d rejections, want %d)", after, before)
	}
}

func TestServerErrorsBackOffThenDeliver(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.fake.FailNext(1, telegramfake.FaultServerError)
	b.fake.FailNext(1, telegramfake.FaultBadGateway)
	b.send(t, jobs.SendMessage{Chat: "77", Text: "eventually"}, "")
	if err := b.fake.Wait(b.ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := b.counter(t, "herald_retries_total", map[string]string{"reason": "server_error"}); got != 2 {
		t.Fatalf("server_error retries = %v, want 2", got)
	}
}

func TestAmbiguousTimeoutIsRetriedAndCounted(t *testing.T) {
	t.Parallel()
	b := setup(t, options{timeout: 300 * time.Millisecond})
	b.fake.FailNext(1, telegramfake.FaultAcceptThenHang)
	res := b.send(t, jobs.SendMessage{Chat: "88", Text: "maybe twice"}, "")
	if err := b.fake.Wait(b.ctx, 2); err != nil {
		t.Fatal(err)
	}
	b.waitGone(t, res.Queue, res.TaskID)
	if got := b.counter(t, "herald_possible_duplicates_total", nil); got != 1 {
		t.Fatalf("possible duplicates = %v, want 1", got)
	}
	if !strings.Contains(b.logs.String(), "may arrive twice") {
		t.Fatal("the possible duplicate was not logged")
	}
}

func TestIdempotencyKeySendsOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	first := b.send(t, jobs.SendMessage{Chat: "91", Text: "once", IdempotencyKey: "alert-123"}, "")
	second := b.send(t, jobs.SendMessage{Chat: "91", Text: "once", IdempotencyKey: "alert-123"}, "")
	if !second.Duplicate || second.TaskID != first.TaskID {
		t.Fatalf("second enqueue = %+v, want a duplicate of %s", second, first.TaskID)
	}
	b.waitTask(t, first.Queue, first.TaskID, func(i *asynq.TaskInfo) bool { return i.State == asynq.TaskStateCompleted })
	third := b.send(t, jobs.SendMessage{Chat: "91", Text: "once", IdempotencyKey: "alert-123"}, "")
	if !third.Duplicate {
		t.Fatal("a key seen within the window must not be sent again after completion")
	}
	if n := len(b.fake.Messages()); n != 1 {
		t.Fatalf("delivered %d messages, want 1", n)
	}
}

func TestRecordedSendIsNotRepeated(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	// A worker that crashed after Telegram accepted the message but before
	// asynq's ack leaves exactly this behind: the send record, and the task.
	id := "crashed-after-send"
	// The record is "parts sent:plain-text-from part:last message id".
	if err := b.rdb.Set(b.ctx, keys.Bot("").Sent(id), "1:-1:17", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	payload, _ := (&jobs.SendMessage{V: 1, Chat: "93", Text: "already out", CreatedAt: time.Now()}).Encode()
	cl := asynq.NewClientFromRedisClient(b.rdb)
	if _, err := cl.Enqueue(asynq.NewTask(jobs.TypeSendMessage, payload), asynq.TaskID(id)); err != nil {
		t.Fatal(err)
	}
	b.waitGone(t, "default", id)
	if n := len(b.fake.Messages()); n != 0 {
		t.Fatalf("a recorded send was repeated (%d messages)", n)
	}
	if got := b.counter(t, "herald_redelivered_already_sent_total", nil); got != 1 {
		t.Fatalf("redelivered_already_sent = %v, want 1", got)
	}
}

func TestLongTextIsSplitInOrder(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	var sb strings.Builder
	for i := 0; sb.Len() < 10000; i++ {
		sb.WriteString("<b>line</b> number ")
		sb.WriteString(strings.Repeat("x", i%40))
		sb.WriteString("\n")
	}
	text := sb.String()
	res := b.send(t, jobs.SendMessage{Chat: "94", Text: text, ParseMode: "HTML"}, "")
	b.waitGone(t, res.Queue, res.TaskID)
	msgs := b.fake.Messages()
	if len(msgs) < 2 {
		t.Fatalf("a %d-char text arrived as %d message(s)", len(text), len(msgs))
	}
	var plain strings.Builder
	for _, m := range msgs {
		n, err := markup.VisibleLen(m.Text, markup.HTML)
		if err != nil || n > markup.MaxMessageLen {
			t.Fatalf("part invalid or too long: %d units, err %v", n, err)
		}
		p, _ := markup.Plain(m.Text, markup.HTML)
		plain.WriteString(p)
	}
	want, _ := markup.Plain(text, markup.HTML)
	if plain.String() != want {
		t.Fatal("the parts, in delivery order, do not rejoin to the original text")
	}
}

func TestRetriesExhaustedAreArchived(t *testing.T) {
	t.Parallel()
	b := setup(t, options{maxRetry: 1})
	b.fake.SetOutage(true)
	res := b.send(t, jobs.SendMessage{Chat: "95", Text: "never"}, "")
	info := b.waitTask(t, res.Queue, res.TaskID, func(i *asynq.TaskInfo) bool { return i.State == asynq.TaskStateArchived })
	if !strings.Contains(info.LastErr, "server_error") {
		t.Fatalf("archived with %q, want the server_error reason", info.LastErr)
	}
}

func TestParseErrorFallsBackToPlainText(t *testing.T) {
	t.Parallel()
	// One message per second to the chat: the plain-text resend waits for
	// the chat's next turn in a later attempt, so the downgrade must persist.
	lim := scaledLimits()
	lim.Private = ratelimit.Per(1, time.Second)
	b := setup(t, options{limits: &lim})
	b.fake.FailNext(1, telegramfake.FaultParseEntities)
	res := b.send(t, jobs.SendMessage{Chat: "96", Text: "<b>bold</b> & more", ParseMode: "HTML"}, "")
	if err := b.fake.Wait(b.ctx, 1); err != nil {
		t.Fatal(err)
	}
	b.waitGone(t, res.Queue, res.TaskID)
	m := b.fake.Messages()[0]
	if m.ParseMode != "" || m.Text != "<b>bold</b> & more" {
		t.Fatalf("fallback sent %+v, want the raw text without parse mode", m)
	}
	if got := b.counter(t, "herald_messages_sent_total", map[string]string{"outcome": "downgraded"}); got != 1 {
		t.Fatalf("downgraded sends = %v, want 1", got)
	}
	if !strings.Contains(b.logs.String(), "resending as plain text") {
		t.Fatal("the downgrade was not logged")
	}
}

// With BotPauseMax negative, a 429 pauses its chat only.
func TestTooManyPausesOnlyThatChat(t *testing.T) {
	t.Parallel()
	lim := scaledLimits()
	lim.BotPauseMax = -1
	b := setup(t, options{limits: &lim})
	b.fake.FailNext(1, telegramfake.FaultTooMany)
	b.send(t, jobs.SendMessage{Chat: "97", Text: "refused first"}, "")
	// Wait for the 429 to happen before sending to the other chat (the fake
	// has no signal for refusals).
	for b.fake.Stats().TooMany == 0 {
		if b.ctx.Err() != nil {
			t.Fatal("no 429 happened")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i := 0; i < 3; i++ {
		b.send(t, jobs.SendMessage{Chat: "98", Text: "other chat"}, "")
	}
	if err := b.fake.Wait(b.ctx, 4); err != nil {
		t.Fatal(err)
	}
	msgs := b.fake.Messages()
	if msgs[len(msgs)-1].Text != "refused first" {
		t.Fatalf("the paused chat's message went out before the other chat's: %+v", msgs)
	}
}

// By default a 429 pauses the whole bot for its retry_after (1 s here):
// Telegram's answer does not say whether the chat or the bot is flooded,
// and a request sent into a bot-wide flood wait only lengthens it.
func TestTooManyPausesTheWholeBot(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.fake.FailNext(1, telegramfake.FaultTooMany)
	b.send(t, jobs.SendMessage{Chat: "197", Text: "refused first"}, "")
	for b.fake.Stats().TooMany == 0 {
		if b.ctx.Err() != nil {
			t.Fatal("no 429 happened")
		}
		time.Sleep(5 * time.Millisecond)
	}
	seen := time.Now()
	for i := 0; i < 3; i++ {
		b.send(t, jobs.SendMessage{Chat: "198", Text: "other chat"}, "")
	}
	if err := b.fake.Wait(b.ctx, 4); err != nil {
		t.Fatal(err)
	}
	msgs := b.fake.Messages()
	for _, m := range msgs {
		if gap := m.At.Sub(seen); gap < 900*time.Millisecond {
			t.Fatalf("%q went out %v after the 429 was seen, inside the 1s bot-wide pause", m.Text, gap)
		}
	}
	if got := b.counter(t, "herald_ratelimit_pauses_total", map[string]string{"scope": "bot"}); got != 1 {
		t.Fatalf("bot-wide pauses = %v, want 1", got)
	}
}

// asynq archives a task whose retry count is spent even when the handler
// only deferred it; Herald keeps the budget itself so a task with no retries
// left (here: none at all) still waits out its rate limit.
func TestRateLimitedTaskWithNoRetryBudgetIsNotArchived(t *testing.T) {
	t.Parallel()
	b := setup(t, options{waiters: -1}) // no waiting in memory: every long wait is a deferral
	zero := 0
	var ids []jobs.Result
	for i := 0; i < 4; i++ {
		ids = append(ids, b.send(t, jobs.SendMessage{Chat: "99", Text: "paced " + strconv.Itoa(i), MaxRetry: &zero}, ""))
	}
	if err := b.fake.Wait(b.ctx, 4); err != nil {
		t.Fatal(err)
	}
	for _, r := range ids {
		b.waitGone(t, r.Queue, r.TaskID)
	}
	if got := b.counter(t, "herald_ratelimit_deferrals_total", nil); got == 0 {
		t.Fatal("no message was deferred; the test did not exercise the limiter")
	}
	if q, _ := b.insp.GetQueueInfo("default"); q.Archived != 0 {
		t.Fatalf("%d tasks archived", q.Archived)
	}
}

// A channel named "@Herald_Alerts", "@herald_alerts" and by its numeric id
// is one chat at Telegram, with one flood limit: Herald resolves the names
// (getChat, once) and paces all three spellings on one schedule, so the
// strict fake never answers 429.
func TestUsernameAndIDShareOneSchedule(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	client, err := telegram.New(telegram.Config{Token: telegramfake.DefaultToken, APIURL: b.fake.URL()})
	if err != nil {
		t.Fatal(err)
	}
	id, err := client.ChatID(b.ctx, "@herald_alerts")
	if err != nil {
		t.Fatal(err)
	}
	chats := []string{"@Herald_Alerts", "@herald_alerts", strconv.FormatInt(id, 10)}
	for i := 0; i < 9; i++ {
		b.send(t, jobs.SendMessage{Chat: chats[i%3], Text: "spelling " + strconv.Itoa(i)}, "")
	}
	if err := b.fake.Wait(b.ctx, 9); err != nil {
		t.Fatal(err)
	}
	st := b.fake.Stats()
	if st.TooMany != 0 {
		t.Fatalf("%d 429s: the three spellings were paced as separate chats", st.TooMany)
	}
	for _, m := range b.fake.Messages() {
		if m.ChatID != id {
			t.Fatalf("message %q went to chat %d, want %d", m.Text, m.ChatID, id)
		}
	}
}

// A critical message to a chat with a backlog of default messages takes the
// chat's next turn instead of waiting behind the backlog (the chat's limit
// still holds: the strict fake answers no 429).
func TestCriticalGoesAheadOfItsChatsBacklog(t *testing.T) {
	t.Parallel()
	lim := scaledLimits()
	lim.PriorityQueues = []string{"critical"}
	lim.Priority = ratelimit.Per(3, time.Second/scale)
	b := setup(t, options{limits: &lim})
	for i := 0; i < 30; i++ {
		b.send(t, jobs.SendMessage{Chat: "4242", Text: "backlog " + strconv.Itoa(i)}, "default")
	}
	if err := b.fake.Wait(b.ctx, 2); err != nil {
		t.Fatal(err)
	}
	b.send(t, jobs.SendMessage{Chat: "4242", Text: "critical"}, "critical")
	if err := b.fake.Wait(b.ctx, 31); err != nil {
		t.Fatal(err)
	}
	for i, m := range b.fake.Messages() {
		if m.Text == "critical" {
			if i > 4 {
				t.Fatalf("the critical message was delivered %dth of 31, behind the chat's backlog", i+1)
			}
			if st := b.fake.Stats(); st.TooMany != 0 {
				t.Fatalf("%d 429s", st.TooMany)
			}
			return
		}
	}
	t.Fatal("the critical message was not delivered")
}

// A Bot API that counts a message's markup into the 4,096 limit refuses a
// text that Herald cut to fit by what Telegram shows: Herald splits the rest
// smaller and delivers every item, never archiving readable text for it.
func TestTooLongIsSplitFurther(t *testing.T) {
	t.Parallel()
	b := setup(t, options{countMarkup: true})
	var text strings.Builder
	var items []string
	for i := 0; i < 50; i++ {
		item := fmt.Sprintf("item %02d", i)
		items = append(items, item)
		fmt.Fprintf(&text, "<b>%s</b> <a href=\"https://alerts.example.org/incidents/%04d/details?source=herald&amp;view=full\">details</a> disk usage above threshold\n", item, i)
	}
	res := b.send(t, jobs.SendMessage{Chat: "808", Text: text.String(), ParseMode: "HTML"}, "")
	b.waitGone(t, res.Queue, res.TaskID)
	var got strings.Builder
	for _, m := range b.fake.Messages() {
		plain, err := markup.Plain(m.Text, markup.Mode(m.ParseMode))
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString(plain)
	}
	for _, item := range items {
		if !strings.Contains(got.String(), item) {
			t.Fatalf("%q was not delivered; delivered %d messages", item, len(b.fake.Messages()))
		}
	}
	if q, _ := b.insp.GetQueueInfo(res.Queue); q.Archived != 0 {
		t.Fatalf("%d tasks archived", q.Archived)
	}
	if n := len(b.fake.Messages()); n < 2 {
		t.Fatalf("%d messages: the text was not split further", n)
	}
}

// TestLateSlotsAreGivenUpThenUsed: with a guard so small that every answer
// from Redis comes back late, a message gives up its slot eight times
// (maxLateForced), then sends on the ninth, once, with no 429: a slow Redis
// delays messages but never stops them.
func TestLateSlotsAreGivenUpThenUsed(t *testing.T) {
	t.Parallel()
	lim := scaledLimits()
	lim.Guard = 2 * time.Microsecond
	b := setup(t, options{limits: &lim})
	b.send(t, jobs.SendMessage{Chat: "4242", Text: "slow redis"}, "default")
	if err := b.fake.Wait(b.ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := b.counter(t, "herald_ratelimit_late_slots_total", nil); n != 8 {
		t.Fatalf("late slots given up: %v, want 8 (maxLateForced)", n)
	}
	if st := b.fake.Stats(); st.Accepted != 1 || st.TooMany != 0 {
		t.Fatalf("fake saw %d accepted and %d 429s, want 1 and 0", st.Accepted, st.TooMany)
	}
}
