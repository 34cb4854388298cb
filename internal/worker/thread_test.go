package worker_test

import (
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// byText returns the fake's message whose text or caption starts with
// prefix.
func byText(t *testing.T, fake *telegramfake.Server, prefix string) telegramfake.Message {
	t.Helper()
	for _, m := range fake.Messages() {
		if strings.HasPrefix(m.Text, prefix) || strings.HasPrefix(m.Caption, prefix) {
			return m
		}
	}
	t.Fatalf("no message starts with %q", prefix)
	return telegramfake.Message{}
}

// TestThreadReplyWaitsForItsFirstMessage: a resolution enqueued right
// after its firing message, which a worker may take first, still replies
// to the firing message; and closing the thread lets the next firing open
// a new one.
func TestThreadReplyWaitsForItsFirstMessage(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	open := &jobs.Thread{Key: "fp-1", Mode: jobs.ThreadOpen}
	b.send(t, jobs.SendMessage{Chat: "-100200", Text: "FIRING disk full", Thread: open}, "default")
	b.send(t, jobs.SendMessage{Chat: "-100200", Text: "RESOLVED disk full", Thread: &jobs.Thread{Key: "fp-1", Mode: jobs.ThreadReply, Close: true}}, "critical")
	if err := b.fake.Wait(b.ctx, 2); err != nil {
		t.Fatal(err)
	}
	firing, resolved := byText(t, b.fake, "FIRING"), byText(t, b.fake, "RESOLVED")
	if resolved.ReplyTo == nil || resolved.ReplyTo.MessageID != firing.MessageID {
		t.Fatalf("resolution replies to %+v, want message %d", resolved.ReplyTo, firing.MessageID)
	}
	// The thread is closed: the next firing opens a new one, and its
	// resolution replies to that. The firing's task is waited for, not
	// only its delivery: the worker records the thread's first message
	// after Telegram's answer, and the closing resolution may still hold
	// the old record when the firing is enqueued.
	again := b.send(t, jobs.SendMessage{Chat: "-100200", Text: "FIRING again", Thread: open}, "default")
	b.waitGone(t, again.Queue, again.TaskID)
	b.send(t, jobs.SendMessage{Chat: "-100200", Text: "RESOLVED again", Thread: &jobs.Thread{Key: "fp-1", Mode: jobs.ThreadReply, Close: true}}, "default")
	if err := b.fake.Wait(b.ctx, 4); err != nil {
		t.Fatal(err)
	}
	firingAgain := byText(t, b.fake, "FIRING again")
	if r := byText(t, b.fake, "RESOLVED again").ReplyTo; r == nil || r.MessageID != firingAgain.MessageID {
		t.Fatalf("second resolution replies to %+v, want message %d", r, firingAgain.MessageID)
	}
}

// TestThreadEditReplacesTheFirstMessage: with mode edit the firing message
// is edited and nothing new is sent; an edit of a message deleted meanwhile
// goes out as a new message.
func TestThreadEditReplacesTheFirstMessage(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	buttons := &jobs.Keyboard{{{Text: "Acknowledge", Data: "ack:1"}}}
	b.send(t, jobs.SendMessage{Chat: "4242", Text: "FIRING cpu", Buttons: buttons, Thread: &jobs.Thread{Key: "cpu", Mode: jobs.ThreadOpen}}, "default")
	if err := b.fake.Wait(b.ctx, 1); err != nil {
		t.Fatal(err)
	}
	firing := byText(t, b.fake, "FIRING cpu")
	if firing.ReplyMarkup == nil || len(firing.ReplyMarkup.InlineKeyboard) != 1 || firing.ReplyMarkup.InlineKeyboard[0][0].CallbackData != "ack:1" {
		t.Fatalf("firing message keyboard %+v, want the Acknowledge button", firing.ReplyMarkup)
	}
	res := b.send(t, jobs.SendMessage{Chat: "4242", Text: "RESOLVED cpu", Thread: &jobs.Thread{Key: "cpu", Mode: jobs.ThreadEdit, Close: true}}, "default")
	b.waitGone(t, res.Queue, res.TaskID)
	if n := len(b.fake.Messages()); n != 1 {
		t.Fatalf("%d messages sent, want the firing one only (edited)", n)
	}
	cur, ok := b.fake.Lookup(firing.ChatID, firing.MessageID)
	if !ok || cur.Current().Text != "RESOLVED cpu" || cur.Current().ReplyMarkup != nil {
		t.Fatalf("firing message now reads %+v, want the resolution without buttons", cur.Current())
	}

	// A deleted first message cannot be edited: a new message goes out.
	b.send(t, jobs.SendMessage{Chat: "4242", Text: "FIRING mem", Thread: &jobs.Thread{Key: "mem", Mode: jobs.ThreadOpen}}, "default")
	if err := b.fake.Wait(b.ctx, 2); err != nil {
		t.Fatal(err)
	}
	mem := byText(t, b.fake, "FIRING mem")
	if err := b.fake.DeleteMessage(mem.ChatID, mem.MessageID); err != nil {
		t.Fatal(err)
	}
	b.send(t, jobs.SendMessage{Chat: "4242", Text: "RESOLVED mem", Thread: &jobs.Thread{Key: "mem", Mode: jobs.ThreadEdit, Close: true}}, "default")
	if err := b.fake.Wait(b.ctx, 3); err != nil {
		t.Fatal(err)
	}
	byText(t, b.fake, "RESOLVED mem")
}

// TestPhotoCaptionAndTheRestAsReplies: a photo's text beyond the caption
// limit follows as a reply; a photo Telegram cannot fetch is archived with
// its reason.
func TestPhotoCaptionAndTheRestAsReplies(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	long := "GRAPH " + strings.Repeat("word ", 400) // about 2,000 characters
	b.send(t, jobs.SendMessage{Chat: "77", Text: long, Photo: &jobs.Photo{URL: "https://grafana.example/render/panel.png"}}, "default")
	if err := b.fake.Wait(b.ctx, 2); err != nil {
		t.Fatal(err)
	}
	msgs := b.fake.Messages()
	photo, rest := msgs[0], msgs[1]
	if photo.Photo == nil || photo.Photo.URL != "https://grafana.example/render/panel.png" {
		t.Fatalf("first message %+v is not the photo", photo)
	}
	if n := len([]rune(photo.Caption)); n == 0 || n > 1024 {
		t.Fatalf("caption is %d characters, want 1 to 1024", n)
	}
	if rest.ReplyTo == nil || rest.ReplyTo.MessageID != photo.MessageID {
		t.Fatalf("the rest replies to %+v, want the photo %d", rest.ReplyTo, photo.MessageID)
	}
	if got := strings.Join(strings.Fields(photo.Caption+" "+rest.Text), " "); got != strings.Join(strings.Fields(long), " ") {
		t.Fatalf("caption and reply do not carry the whole text")
	}

	b.fake.SetPhotoURL("https://grafana.example/render/gone.png", telegramfake.PhotoURL{Unreachable: true})
	res := b.send(t, jobs.SendMessage{Chat: "77", Text: "GONE", Photo: &jobs.Photo{URL: "https://grafana.example/render/gone.png"}}, "default")
	info := b.waitTask(t, res.Queue, res.TaskID, func(i *asynq.TaskInfo) bool { return i.State == asynq.TaskStateArchived })
	if !strings.Contains(info.LastErr, "photo_rejected") || !strings.Contains(info.LastErr, "failed to get HTTP URL content") {
		t.Fatalf("archived with %q, want the photo's reason and Telegram's words", info.LastErr)
	}
}

// TestThreadReplyTakenBeforeTheFirstMessage: a reply whose thread's first
// message is accepted but not sent yet waits (handed back to Redis) and
// then replies to it.
func TestThreadReplyTakenBeforeTheFirstMessage(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	// What the producer writes when it accepts the firing message.
	if err := b.rdb.Set(b.ctx, keys.Bot("").Thread("-100300", "fp-2"), "pending", jobs.ThreadWait).Err(); err != nil {
		t.Fatal(err)
	}
	res := b.send(t, jobs.SendMessage{Chat: "-100300", Text: "RESOLVED early", Thread: &jobs.Thread{Key: "fp-2", Mode: jobs.ThreadReply, Close: true}}, "default")
	// Handed back with its reason, shown in the web UI; not a failure.
	b.waitTask(t, res.Queue, res.TaskID, func(i *asynq.TaskInfo) bool {
		return strings.Contains(i.LastErr, "waiting for the thread's first message") && i.Retried == 0
	})
	if n := len(b.fake.Messages()); n != 0 {
		t.Fatalf("%d messages sent before the thread's first one", n)
	}
	b.send(t, jobs.SendMessage{Chat: "-100300", Text: "FIRING late", Thread: &jobs.Thread{Key: "fp-2", Mode: jobs.ThreadOpen}}, "default")
	if err := b.fake.Wait(b.ctx, 2); err != nil {
		t.Fatal(err)
	}
	firing, resolved := byText(t, b.fake, "FIRING late"), byText(t, b.fake, "RESOLVED early")
	if resolved.ReplyTo == nil || resolved.ReplyTo.MessageID != firing.MessageID {
		t.Fatalf("resolution replies to %+v, want message %d", resolved.ReplyTo, firing.MessageID)
	}
	b.waitGone(t, res.Queue, res.TaskID)
	if n := b.rdb.Exists(b.ctx, keys.Bot("").Thread("-100300", "fp-2")).Val(); n != 0 {
		t.Fatalf("the closed thread is still remembered")
	}
}
