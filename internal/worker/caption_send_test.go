package worker_test

import (
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/markup"
)

// TestPhotoCaptionFilledThroughTelegram is issue 31's case end to end: a
// title and one 2,880-character HTML paragraph go out as a caption of
// nearly 1,024 characters, which the fake Telegram accepts, and one reply.
func TestPhotoCaptionFilledThroughTelegram(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	para := strings.TrimSpace(strings.Repeat("latency above the objective ", 103))[:2880]
	text := "<b>p99 latency high on checkout</b>\n\n" + para
	b.send(t, jobs.SendMessage{Chat: "78", Text: text, ParseMode: "HTML", Photo: &jobs.Photo{URL: "https://grafana.example/render/p99.png"}}, "default")
	if err := b.fake.Wait(b.ctx, 2); err != nil {
		t.Fatal(err)
	}
	msgs := b.fake.Messages()
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want the photo and one reply", len(msgs))
	}
	photo, rest := msgs[0], msgs[1]
	caption, err := markup.Plain(photo.Caption, markup.HTML)
	if err != nil {
		t.Fatal(err)
	}
	if n := markup.UTF16Len(caption); n < 1000 || n > 1024 {
		t.Fatalf("caption shows %d characters, want close to 1,024", n)
	}
	words := map[string]bool{"latency": true, "above": true, "the": true, "objective": true}
	last, first := strings.Fields(caption), strings.Fields(rest.Text)
	if !words[last[len(last)-1]] || !words[first[0]] {
		t.Fatalf("cut inside a word: %q | %q", last[len(last)-1], first[0])
	}
	want, _ := markup.Plain(text, markup.HTML)
	if strings.TrimSpace(caption)+" "+strings.TrimSpace(rest.Text) != want {
		t.Fatal("caption and reply do not add up to the text")
	}
}
