package broadcast_test

import (
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/broadcast"
)

// TestTemplateValues: placeholders take each chat's value, then the
// defaults, escaped for the parse mode, so a value cannot change the
// markup; text that is no placeholder stays as written.
func TestTemplateValues(t *testing.T) {
	t.Parallel()
	f := newFixture(t, broadcast.Config{})
	res, err := f.svc.Create(ctx, broadcast.Request{
		Chats: []string{"1", "@Launch_news", "3"}, ParseMode: "HTML",
		Text:     "Hi <b>{{ name }}</b>, {{plan}} {{not a key}} {{",
		Values:   map[string]map[string]string{"1": {"name": "Ann <admin>", "plan": "pro"}, "@launch_news": {"name": "all"}},
		Defaults: map[string]string{"plan": "free", "name": "there"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for chat, want := range map[string]string{
		"1":            "Hi <b>Ann &lt;admin&gt;</b>, pro {{not a key}} {{",
		"@Launch_news": "Hi <b>all</b>, free {{not a key}} {{",
		"3":            "Hi <b>there</b>, free {{not a key}} {{",
	} {
		if got := f.payload(t, res.ID, chat).Text; got != want {
			t.Errorf("chat %s: %q, want %q", chat, got, want)
		}
	}
	md, err := f.svc.Create(ctx, broadcast.Request{Chats: []string{"1"}, ParseMode: "MarkdownV2", Text: "*{{v}}*",
		Values: map[string]map[string]string{"1": {"v": "a_b*c"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.payload(t, md.ID, "1").Text; got != `*a\_b\*c*` {
		t.Errorf("MarkdownV2 value: %q", got)
	}
}

// TestBadInput: each problem is named by its field, chats by index.
func TestBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, broadcast.Config{MaxChats: 5})
	for _, c := range []struct {
		name  string
		req   broadcast.Request
		field string
		says  string
	}{
		{"no chats", broadcast.Request{Text: "x"}, "chats", "is required"},
		{"too many", broadcast.Request{Chats: chatList(1, 6), Text: "x"}, "chats", "the limit is 5 (HERALD_BROADCAST_MAX_CHATS)"},
		{"bad chat", broadcast.Request{Chats: []string{"1", "two", "3"}, Text: "x"}, "chats[1]", "neither a numeric chat id nor an @username"},
		{"unknown bot", broadcast.Request{Bot: "nope", Chats: []string{"1"}, Text: "x"}, "bot", `"nope" is not a bot of this Herald`},
		{"no text", broadcast.Request{Chats: []string{"1"}}, "text", "is required"},
		{"text too long", broadcast.Request{Chats: []string{"1"}, Text: strings.Repeat("x", 40000)}, "text", "the limit is 32768"},
		{"template too long", broadcast.Request{Chats: []string{"1"}, Text: strings.Repeat("{{", 64<<10) + "}}"}, "text", "the limit is 32768"},
		{"value too long", broadcast.Request{Chats: []string{"1"}, Text: "{{v}}",
			Values: map[string]map[string]string{"1": {"v": strings.Repeat("y", 40000)}}}, "values", `of "v" for chat "1" longer`},
		{"default too long", broadcast.Request{Chats: []string{"1"}, Text: "{{v}}",
			Defaults: map[string]string{"v": strings.Repeat("y", 40000)}}, "defaults", `of "v" longer`},
		{"bad markup", broadcast.Request{Chats: []string{"1"}, Text: "<b>x", ParseMode: "HTML"}, "text", "not valid HTML"},
		{"uploaded photo", broadcast.Request{Chats: []string{"1"}, Text: "x", Photo: photoData()}, "photo.data", "give photo.url"},
		{"missing value", broadcast.Request{Chats: []string{"1", "2"}, Text: "Hi {{name}}",
			Values: map[string]map[string]string{"1": {"name": "A"}}}, "values", `has no "name" for chat 2`},
		{"values of another chat", broadcast.Request{Chats: []string{"1"}, Text: "x",
			Values: map[string]map[string]string{"9": {"name": "A"}}}, "values", `"9", which is not among the chats`},
		{"too long once filled", broadcast.Request{Chats: []string{"1", "2"}, Text: "{{v}}{{v}}",
			Values: map[string]map[string]string{"1": {"v": "ok"}, "2": {"v": strings.Repeat("y", 20000)}}}, "text", "for chat 2"},
		{"no audience", broadcast.Request{Audience: "vips", Text: "x", From: "app"}, "audience", "PUT /v1/audiences/vips"},
	} {
		_, err := f.svc.Create(ctx, c.req)
		if msg, ok := fields(t, err)[c.field]; !ok || !strings.Contains(msg, c.says) {
			t.Errorf("%s: %v; want %s saying %q", c.name, err, c.field, c.says)
		}
	}
	if n := f.pending(t); n != 0 {
		t.Errorf("bad requests stored %d tasks", n)
	}
}

// TestAudience: an uploaded chat list is broadcast to by name, by its own
// token only.
func TestAudience(t *testing.T) {
	t.Parallel()
	f := newFixture(t, broadcast.Config{})
	info, err := f.svc.PutAudience(ctx, "app", "vips", []string{"5", "6", "5", "@Some_channel"})
	if err != nil || info.Chats != 3 || info.RepeatedChats != 1 {
		t.Fatalf("PutAudience = %+v, %v", info, err)
	}
	res, err := f.svc.Create(ctx, broadcast.Request{Audience: "vips", Text: "hi", From: "app"})
	if err != nil || res.Queued != 3 {
		t.Fatalf("Create = %+v, %v", res, err)
	}
	if _, err := f.svc.Create(ctx, broadcast.Request{Audience: "vips", Text: "hi", From: "other"}); fields(t, err)["audience"] == "" {
		t.Errorf("another token reached the audience: %v", err)
	}
	if was, err := f.svc.DeleteAudience(ctx, "app", "vips"); !was || err != nil {
		t.Errorf("DeleteAudience = %v, %v", was, err)
	}
	if _, err := f.svc.PutAudience(ctx, "app", "Bad Name", []string{"1"}); fields(t, err)["audience"] == "" {
		t.Errorf("a bad audience name: %v", err)
	}
}
