package worker_test

import (
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// TestBlockedChatCostsOneRequest: messages to a user who blocked the bot
// reach Telegram once; that 403 marks the chat blocked fleet-wide, and the
// rest fail at once as chat_blocked without a request. Once the chat is
// back, the next message is sent.
func TestBlockedChatCostsOneRequest(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	b.fake.SetChat("501", telegramfake.ChatBehavior{Blocked: true})
	before := b.fake.Stats().Requests
	const n = 20
	ids := make([]string, n)
	for i := range ids {
		ids[i] = b.send(t, jobs.SendMessage{Chat: "501", Text: "hello"}, "").TaskID
	}
	store := ledger.NewStore(b.rdb, ledger.Config{})
	for _, id := range ids {
		info := b.waitTask(t, "default", id, func(i *asynq.TaskInfo) bool { return i.State == asynq.TaskStateArchived })
		if !strings.HasPrefix(info.LastErr, ledger.ReasonChatBlocked+":") {
			t.Errorf("task %s archived with %q; want reason %s", id, info.LastErr, ledger.ReasonChatBlocked)
		}
		rec, ok, err := store.Get(b.ctx, "", id)
		if err != nil || !ok || rec.State != ledger.StateFailed || rec.Reason != ledger.ReasonChatBlocked {
			t.Errorf("ledger record of %s = %+v (%v, %v); want failed with chat_blocked", id, rec, ok, err)
		}
	}
	if got := b.fake.Stats().Requests - before; got != 1 {
		t.Fatalf("%d messages to a blocked chat made %d Telegram requests; want 1", n, got)
	}
	cs := chats.NewStore(b.rdb)
	st, err := cs.Get(b.ctx, "default", "501")
	if err != nil || !st.Blocked || st.Source != chats.SourceTelegram403 || st.Reason != chats.ReasonBlocked {
		t.Fatalf("chat state = %+v, %v; want blocked by a telegram_403", st, err)
	}
	if got := b.counter(t, "herald_chat_blocks_total", map[string]string{"source": chats.SourceTelegram403}); got != 1 {
		t.Fatalf("herald_chat_blocks_total = %v; want 1", got)
	}
	b.fake.SetChat("501", telegramfake.ChatBehavior{})
	if _, err := cs.Unblock(b.ctx, "default", "501", chats.SourceAPI); err != nil {
		t.Fatal(err)
	}
	res := b.send(t, jobs.SendMessage{Chat: "501", Text: "welcome back"}, "")
	b.waitGone(t, "default", res.TaskID)
	if rec, ok, _ := store.Get(b.ctx, "", res.TaskID); !ok || rec.State != ledger.StateSent {
		t.Fatalf("after the chat came back: %+v; want sent", rec)
	}
}
