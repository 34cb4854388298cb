package digest_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/digest"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/markup"
)

// reserved holds every character Telegram's HTML or MarkdownV2 reserves.
const reserved = `<>&"'_*[]()~` + "`" + `>#+-=|{}.!\`

// pieces are the building blocks of random item texts: reserved
// characters, entity look-alikes, astral characters (surrogate pairs in
// UTF-16), emoji sequences that must not be cut, combining marks, controls
// and line breaks.
var pieces = []string{
	"a", "Z", "9", " ", " ", "word", "digest", "\n", "\n\n", "\t", "\r\n", "\x00", "\x7f",
	"<b>", "</a>", "&amp;", "&lt;", "&#128512;", "&", "<", ">", `"`, "'",
	"_", "*", "[", "]", "(", ")", "~", "`", "#", "+", "-", "=", "|", "{", "}", ".", "!", `\`,
	"😀", "𝔘", "👩‍💻", "👍🏽", "🇩🇪", "e\u0301", "1\ufe0f\u20e3", "\u200d", "ü", "日本語",
}

func randText(r *rand.Rand, maxPieces int) string {
	var b strings.Builder
	for n := r.IntN(maxPieces + 1); n > 0; n-- {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func randItem(r *rand.Rand) jobs.DigestItem {
	it := jobs.DigestItem{Title: randText(r, 12), Summary: randText(r, 40)}
	switch r.IntN(6) {
	case 0: // a long title
		it.Title = strings.Repeat("Title with 😀 & <b> ", 1+r.IntN(100))
	case 1: // a long summary
		it.Summary = strings.Repeat("line of summary _*[]()~`>#+-=|{}.! 👩‍💻\n", 1+r.IntN(200))
	}
	if strings.TrimSpace(it.Title) == "" {
		it.Title = "t" + it.Title
	}
	switch r.IntN(4) {
	case 0:
		it.URL = fmt.Sprintf("https://example.com/a?x=%d&y=\"<q>\"#frag", r.IntN(1000))
	case 1:
		it.URL = "https://example.com/" + strings.Repeat("p", r.IntN(500))
	case 2:
		it.URL = "javascript:alert(1)" // not linkable: shown as text
	}
	return it
}

// block is the visible form of one item the renderer printed.
type block struct{ title, link, summary string }

// checkRendered asserts every property a rendering must have and returns
// the items it printed, in order.
func checkRendered(t *testing.T, items []jobs.DigestItem, rd digest.Rendered, maxMessages, limit int) {
	t.Helper()
	if len(rd.Texts) == 0 || len(rd.Texts) > maxMessages {
		t.Fatalf("%d messages for %d items, want 1..%d", len(rd.Texts), len(items), maxMessages)
	}
	if rd.Count < 1 || rd.Count > len(items) {
		t.Fatalf("count %d of %d items", rd.Count, len(items))
	}
	total := 0
	for _, n := range rd.PerText {
		total += n
	}
	if total != rd.Count || len(rd.PerText) != len(rd.Texts) {
		t.Fatalf("per-message counts %v do not add up to %d", rd.PerText, rd.Count)
	}
	next := 0
	for i, text := range rd.Texts {
		if err := markup.Validate(text, markup.HTML); err != nil {
			t.Fatalf("message %d is not valid HTML: %v\n%s", i+1, err, text)
		}
		if n, _ := markup.VisibleLen(text, markup.HTML); n > limit {
			t.Fatalf("message %d is %d units long, limit %d", i+1, n, limit)
		}
		if !utf8.ValidString(text) {
			t.Fatalf("message %d is not valid UTF-8", i+1)
		}
		blocks := parseBlocks(t, text, rd.PerText[i])
		for j, b := range blocks {
			checkItem(t, items[next+j], b, limit)
		}
		next += rd.PerText[i]
		wantFooter := i == len(rd.Texts)-1 && rd.Count < len(items)
		footer := fmt.Sprintf("<i>+%d more in the next digest</i>", len(items)-rd.Count)
		if strings.HasSuffix(text, footer) != wantFooter {
			t.Fatalf("message %d: footer present=%v, want %v:\n%s", i+1, !wantFooter, wantFooter, text)
		}
	}
}

// parseBlocks cuts a rendered message into its items. Items start with the
// bullet at the beginning of the text after the header or after a blank
// line; a summary may hold blank lines, so the cut is made at the next
// bullet followed by a title tag.
func parseBlocks(t *testing.T, text string, n int) []block {
	t.Helper()
	_, body, ok := strings.Cut(text, "\n\n")
	if !ok {
		t.Fatalf("no header in %q", text)
	}
	if i := strings.LastIndex(body, "\n\n<i>+"); i >= 0 {
		body = body[:i]
	}
	var starts []int
	for i := 0; i < len(body); {
		j := strings.Index(body[i:], "• <")
		if j < 0 {
			break
		}
		k := i + j
		if k == 0 || strings.HasSuffix(body[:k], "\n\n") {
			starts = append(starts, k)
		}
		i = k + 1
	}
	// A summary is escaped, so "• <" inside one is "• &lt;": every match is
	// an item.
	if len(starts) != n {
		t.Fatalf("found %d items, want %d, in:\n%s", len(starts), n, text)
	}
	blocks := make([]block, n)
	for i, s := range starts {
		end := len(body)
		if i+1 < n {
			end = starts[i+1] - 2
		}
		raw := body[s+len("• ") : end]
		var b block
		head, sum, _ := strings.Cut(raw, "\n")
		if strings.HasPrefix(head, `<a href="`) {
			href, rest, _ := strings.Cut(strings.TrimPrefix(head, `<a href="`), `">`)
			b.link, _ = markup.Plain(href, markup.HTML)
			head = "<b>" + strings.TrimSuffix(rest, "</a>") + "</b>"
		}
		b.title, _ = markup.Plain(head, markup.HTML)
		b.summary, _ = markup.Plain(sum, markup.HTML)
		blocks[i] = b
	}
	return blocks
}

// checkItem compares a printed item with the item it came from.
func checkItem(t *testing.T, it jobs.DigestItem, b block, limit int) {
	t.Helper()
	want := digest.CleanTitle(it.Title)
	if want == "" {
		want = "(untitled)"
	}
	if b.title != want && !(strings.HasSuffix(b.title, "…") && strings.HasPrefix(want, strings.TrimSuffix(b.title, "…")) &&
		markup.UTF16Len(want) > min(jobs.MaxItemTitleLen, limit-100)) {
		t.Fatalf("title %q printed as %q", want, b.title)
	}
	summary := digest.CleanSummary(it.Summary)
	if u := strings.TrimSpace(it.URL); digest.Linkable(u) {
		if b.link != u {
			t.Fatalf("link %q printed as %q", u, b.link)
		}
	} else if u != "" {
		summary = strings.TrimSpace(digest.CleanTitle(u) + "\n" + summary)
	}
	switch {
	case b.summary == summary, b.summary == "":
	case strings.HasSuffix(b.summary, "…") && strings.HasPrefix(summary, strings.TrimSuffix(b.summary, "…")):
	default:
		t.Fatalf("summary %q printed as %q", summary, b.summary)
	}
}

func TestRenderRandomItems(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		n := 1 + r.IntN(120)
		items := make([]jobs.DigestItem, n)
		for i := range items {
			items[i] = randItem(r)
		}
		maxMessages := 1 + r.IntN(4)
		limit := markup.MaxMessageLen
		if r.IntN(3) == 0 {
			limit = 300 + r.IntN(3000)
		}
		rd, err := digest.Render(items, maxMessages, limit)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checkRendered(t, items, rd, maxMessages, limit)
		again, _ := digest.Render(items, maxMessages, limit)
		if strings.Join(again.Texts, "\x00") != strings.Join(rd.Texts, "\x00") {
			t.Fatalf("seed %d: rendering is not deterministic", seed)
		}
		// Summaries never cost an item its place in this digest.
		bare := make([]jobs.DigestItem, n)
		for i, it := range items {
			bare[i] = jobs.DigestItem{Title: it.Title, URL: it.URL}
			if !digest.Linkable(strings.TrimSpace(it.URL)) {
				bare[i].URL = ""
			}
		}
		if b, _ := digest.Render(bare, maxMessages, limit); b.Count != rd.Count && anyBadURL(items) == 0 {
			t.Fatalf("seed %d: %d items fit with summaries, %d without", seed, rd.Count, b.Count)
		}
	}
}

func anyBadURL(items []jobs.DigestItem) int {
	n := 0
	for _, it := range items {
		if u := strings.TrimSpace(it.URL); u != "" && !digest.Linkable(u) {
			n++
		}
	}
	return n
}

func TestRenderFiftyAlertsInThreeMessages(t *testing.T) {
	t.Parallel()
	items := make([]jobs.DigestItem, 50)
	for i := range items {
		items[i] = jobs.DigestItem{
			Title:   fmt.Sprintf("[FIRING] disk usage above 90%% on db-%02d", i),
			URL:     fmt.Sprintf("https://grafana.example.com/d/disk?var-host=db-%02d&from=now-1h", i),
			Summary: strings.Repeat("The volume /var/lib/postgresql is filling up; 12 GB left at the current rate. ", 3),
		}
	}
	rd, err := digest.Render(items, 3, markup.MaxMessageLen)
	if err != nil {
		t.Fatal(err)
	}
	checkRendered(t, items, rd, 3, markup.MaxMessageLen)
	if rd.Count != 50 {
		t.Fatalf("%d of 50 items fit into 3 messages, want all", rd.Count)
	}
	t.Logf("50 alerts: %d messages, summaries cut to %d units", len(rd.Texts), rd.SummaryCap)
}

func TestRenderShowsFullSummariesWhenTheyFit(t *testing.T) {
	t.Parallel()
	items := []jobs.DigestItem{{Title: "a", Summary: "first\nsecond"}, {Title: "b", URL: "https://x.example/?a=1&b=2"}}
	rd, err := digest.Render(items, 3, markup.MaxMessageLen)
	if err != nil {
		t.Fatal(err)
	}
	want := "<b>Digest</b> · 2 items\n\n• <b>a</b>\nfirst\nsecond\n\n• <a href=\"https://x.example/?a=1&amp;b=2\">b</a>"
	if len(rd.Texts) != 1 || rd.Texts[0] != want || rd.SummaryCap != -1 {
		t.Fatalf("got %q (cap %d), want %q", rd.Texts, rd.SummaryCap, want)
	}
}

func TestRenderCarriesWhatDoesNotFit(t *testing.T) {
	t.Parallel()
	items := make([]jobs.DigestItem, 20)
	for i := range items {
		items[i] = jobs.DigestItem{Title: fmt.Sprintf("%02d ", i) + strings.Repeat("long title ", 90)}
	}
	rd, err := digest.Render(items, 2, markup.MaxMessageLen)
	if err != nil {
		t.Fatal(err)
	}
	checkRendered(t, items, rd, 2, markup.MaxMessageLen)
	if rd.Count >= 20 || rd.Count < 6 {
		t.Fatalf("%d items of ~1000 units fit into 2 messages, want 6 to 19", rd.Count)
	}
	if !strings.HasSuffix(rd.Texts[1], fmt.Sprintf("+%d more in the next digest</i>", 20-rd.Count)) {
		t.Fatalf("last message lacks the carried count:\n%s", rd.Texts[1])
	}
}

// TestRenderReservedCharacters puts every reserved character into each
// field: the visible text shows them literally.
func TestRenderReservedCharacters(t *testing.T) {
	t.Parallel()
	nasty := reserved + " &amp; &#60; <b>bold</b> <a href=\"x\">l</a> *b* _i_ [t](u) ||s|| 😀👩‍💻"
	items := []jobs.DigestItem{
		{Title: "T " + nasty, URL: "https://example.com/?q=" + `"&<>'` + "#x", Summary: "S " + nasty},
		{Title: "U " + nasty, Summary: "line1\n" + nasty},
	}
	rd, err := digest.Render(items, 1, markup.MaxMessageLen)
	if err != nil {
		t.Fatal(err)
	}
	checkRendered(t, items, rd, 1, markup.MaxMessageLen)
	plain, err := markup.Plain(rd.Texts[0], markup.HTML)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"T " + nasty, "S " + nasty, "U " + nasty, "line1\n" + nasty} {
		if !strings.Contains(plain, want) {
			t.Errorf("visible text lacks %q:\n%s", want, plain)
		}
	}
}

// TestRenderMarkdownV2Items derives items from MarkdownV2 messages whose
// text escapes every reserved character: the digest shows the characters,
// not the escapes.
func TestRenderMarkdownV2Items(t *testing.T) {
	t.Parallel()
	literal := "_*[]()~`>#+-=|{}.!\\"
	msgs := []jobs.SendMessage{
		{Chat: "1", ParseMode: "MarkdownV2", Text: "*Deploy* " + markup.EscapeMarkdownV2(literal) + "\ndetails " + markup.EscapeMarkdownV2(literal+" 1.2.3!")},
		{Chat: "1", ParseMode: "HTML", Text: "<b>HTML</b> &lt;tag&gt; &amp; \"q\"\nbody <i>" + markup.EscapeHTML(reserved) + "</i>"},
	}
	var items []jobs.DigestItem
	for _, m := range msgs {
		if err := markup.Validate(m.Text, markup.Mode(m.ParseMode)); err != nil {
			t.Fatalf("test message does not parse: %v", err)
		}
		items = append(items, jobs.DeriveItem(m))
	}
	rd, err := digest.Render(items, 1, markup.MaxMessageLen)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := markup.Plain(rd.Texts[0], markup.HTML)
	for _, want := range []string{"Deploy " + literal, "details " + literal + " 1.2.3!", `HTML <tag> & "q"`, "body " + reserved} {
		if !strings.Contains(plain, want) {
			t.Errorf("visible text lacks %q:\n%s", want, plain)
		}
	}
}

func TestShorten(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"abcdefghijklmnop", 6, "abcde…"},
		{"one two three four", 15, "one two three…"},
		{"ab😀cd", 4, "ab…"},              // the pair would not fit with the ellipsis
		{"ab😀cd", 5, "ab😀…"},             // 2 + 2 + 1 units
		{"x👩‍💻yz", 5, "x…"},              // never cut inside the ZWJ sequence
		{"xe\u0301\u0301yz", 3, "x…"},    // nor between a letter and its marks
		{"ok 👍🏽👍🏽", 6, "ok…"},            // nor before a skin tone
		{"1\ufe0f\u20e3 keycap", 3, "…"}, // nor inside a keycap
	}
	for _, tc := range tests {
		got := digest.Shorten(tc.in, tc.max)
		if got != tc.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
		if markup.UTF16Len(got) > tc.max {
			t.Errorf("Shorten(%q, %d) = %q is %d units", tc.in, tc.max, got, markup.UTF16Len(got))
		}
	}
}

func FuzzRender(f *testing.F) {
	f.Add("title", "https://example.com/?a=1&b=2", "summary", uint8(3), uint16(4096), uint8(2))
	f.Add(reserved, `https://e.com/"><script>`, reserved+"\n"+reserved, uint8(1), uint16(300), uint8(5))
	f.Fuzz(func(t *testing.T, title, url, summary string, maxMessages uint8, limit uint16, copies uint8) {
		maxMessages = maxMessages%digest.MaxMessagesLimit + 1
		lim := 200 + int(limit)%(markup.MaxMessageLen-199)
		n := int(copies)%60 + 1
		items := make([]jobs.DigestItem, n)
		for i := range items {
			items[i] = jobs.DigestItem{Title: fmt.Sprint(i) + title, URL: url, Summary: summary}
		}
		rd, err := digest.Render(items, int(maxMessages), lim)
		if err != nil {
			t.Fatal(err)
		}
		checkRendered(t, items, rd, int(maxMessages), lim)
	})
}
