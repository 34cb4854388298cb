package worker_test

import (
	"encoding/json"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/statushook"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// storedEvent reads the callback event stored under id, waiting for it.
func storedEvent(t *testing.T, b *testBundle, id string) map[string]any {
	t.Helper()
	info := b.waitTask(t, statushook.Queue, id, func(*asynq.TaskInfo) bool { return true })
	var job struct {
		URL  string          `json:"url"`
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(info.Payload, &job); err != nil {
		t.Fatalf("event task %s: %v (%s)", id, err, info.Payload)
	}
	var ev struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(job.Body, &ev); err != nil {
		t.Fatalf("event body %s: %v", job.Body, err)
	}
	if job.URL != "http://127.0.0.1:9/hook" {
		t.Fatalf("event for %q", job.URL)
	}
	ev.Data["type"] = ev.Type
	return ev.Data
}

// TestSettledMessagesStoreTheirEvents: a message with a callback URL
// stores message.sent with the message id the fake gave; messages to a
// chat that blocked the bot store message.failed, and the first
// chat.blocked once.
func TestSettledMessagesStoreTheirEvents(t *testing.T) {
	t.Parallel()
	secret, err := statushook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t, options{callbacks: secret})
	const hook = "http://127.0.0.1:9/hook"
	res := b.send(t, jobs.SendMessage{Chat: "-1007", Text: "hi", CallbackURL: hook}, "")
	ev := storedEvent(t, b, statushook.EventID(res.TaskID, statushook.TypeMessageSent))
	msgs := b.fake.Messages()
	parts, _ := ev["parts"].([]any)
	if ev["type"] != statushook.TypeMessageSent || ev["task_id"] != res.TaskID || ev["state"] != "sent" || len(msgs) != 1 || len(parts) != 1 ||
		parts[0].(map[string]any)["message_id"] != float64(msgs[0].MessageID) {
		t.Fatalf("message.sent data = %v; fake sent %+v", ev, msgs)
	}

	b.fake.SetChat("601", telegramfake.ChatBehavior{Blocked: true})
	var ids []string
	for range 3 {
		ids = append(ids, b.send(t, jobs.SendMessage{Chat: "601", Text: "x", CallbackURL: hook}, "").TaskID)
	}
	for _, id := range ids {
		ev := storedEvent(t, b, statushook.EventID(id, statushook.TypeMessageFailed))
		if ev["state"] != "failed" || ev["reason"] != "chat_blocked" {
			t.Fatalf("message.failed data = %v", ev)
		}
	}
	tasks, err := b.insp.ListPendingTasks(statushook.Queue)
	if err != nil {
		t.Fatal(err)
	}
	blocked := 0
	for _, tk := range tasks {
		var job struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(tk.Payload, &job)
		if job.Type == statushook.TypeChatBlocked {
			blocked++
		}
	}
	if blocked != 1 {
		t.Fatalf("%d chat.blocked events stored; want 1", blocked)
	}
}
