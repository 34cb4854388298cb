package jobs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
)

func TestBotValidation(t *testing.T) {
	known := []string{"default", "pages", "status"}
	for _, tc := range []struct {
		name, bot string
		known     []string
		want      string // "" valid, else a part of the bot field's message
	}{
		{name: "no bot goes to default", bot: "", known: known},
		{name: "named bot", bot: "pages", known: known},
		{name: "explicit default", bot: "default", known: known},
		{name: "unknown bot names the known ones", bot: "paging", known: known, want: `"paging" is not a bot of this Herald; its bots are default, pages, status`},
		{name: "no default bot", bot: "", known: []string{"pages"}, want: "is required: this Herald has no default bot; its bots are pages"},
		{name: "malformed name", bot: "Pages", known: known, want: "is not a bot name"},
		{name: "any well-formed name without a list", bot: "whatever", known: nil},
		{name: "malformed without a list", bot: "a}b", known: nil, want: "is not a bot name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := jobs.SendMessage{Chat: "42", Text: "hi", Bot: tc.bot}
			err := m.Normalize(jobs.Limits{Bots: tc.known}, time.Now())
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var verr *jobs.ValidationError
			if !errors.As(err, &verr) || len(verr.Fields) != 1 || verr.Fields[0].Field != "bot" {
				t.Fatalf("error %v, want one on the bot field", err)
			}
			if !strings.Contains(verr.Fields[0].Message, tc.want) {
				t.Fatalf("message %q, want it to contain %q", verr.Fields[0].Message, tc.want)
			}
		})
	}
}

func TestDefaultBotIsSpelledOneWay(t *testing.T) {
	m := jobs.SendMessage{Chat: "42", Text: "hi", Bot: "default"}
	if err := m.Normalize(jobs.Limits{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if m.Bot != "" || m.BotName() != "default" {
		t.Fatalf("Bot = %q, BotName = %q; want \"\" and default", m.Bot, m.BotName())
	}
}

func TestGroupKeyIsPerBot(t *testing.T) {
	for _, tc := range []struct {
		m    jobs.SendMessage
		want string
	}{
		{jobs.SendMessage{Chat: "-100123"}, "-100123"},
		{jobs.SendMessage{Chat: "@Chan", MessageThreadID: 7}, "@chan:7"},
		{jobs.SendMessage{Chat: "-100123", Bot: "pages"}, "pages/-100123"},
		{jobs.SendMessage{Chat: "@Chan", Bot: "pages", MessageThreadID: 7}, "pages/@chan:7"},
	} {
		if got := jobs.GroupKey(tc.m); got != tc.want {
			t.Errorf("GroupKey(%+v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}

// TestBotsOwnQueueIsItsDefault: a message that names its bot and no queue
// goes to the queue named after the bot when there is one (on a Cluster it
// shares the bot's slot); otherwise to the default queue.
func TestBotsOwnQueueIsItsDefault(t *testing.T) {
	t.Parallel()
	enq, _ := newEnqueuer(t, jobs.EnqueueConfig{Queues: []string{"default", "pages"}})
	ctx := context.Background()
	for _, tc := range []struct{ bot, queue, want string }{
		{"pages", "", "pages"},
		{"status", "", "default"},
		{"", "", "default"},
		{"pages", "default", "default"},
	} {
		res, err := enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Bot: tc.bot, Chat: "42", Text: "hi " + tc.bot + tc.queue}, Queue: tc.queue})
		if err != nil {
			t.Fatal(err)
		}
		if res.Queue != tc.want {
			t.Errorf("bot %q, queue %q: went to %q, want %q", tc.bot, tc.queue, res.Queue, tc.want)
		}
	}
}
