package jobs_test

import (
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
