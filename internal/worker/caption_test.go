package worker

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/telegram"
)

// paragraph is n characters of words of varying length, no line break.
func paragraph(n int) string {
	words := []string{"disk", "usage", "on", "node-7", "crossed", "the", "threshold", "again"}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(words[i%len(words)] + " ")
	}
	return strings.TrimSpace(b.String()[:n])
}

// photoSplit splits text as a photo's and checks every part: valid in
// mode, the caption within its limit, the rest within a message's.
func photoSplit(t *testing.T, text string, mode markup.Mode) []string {
	t.Helper()
	ps, modes := parts(jobs.SendMessage{Text: text, ParseMode: string(mode), Photo: &jobs.Photo{URL: "https://x.example/p.png"}}, progress{})
	for i, p := range ps {
		if modes[i] != mode {
			t.Fatalf("part %d went as %q, want %q", i, modes[i], mode)
		}
		n, err := markup.VisibleLen(p, mode)
		if err != nil {
			t.Fatalf("part %d is invalid: %v\n%s", i, err, p)
		}
		if limit := limitAt(jobs.SendMessage{Photo: &jobs.Photo{}}, progress{}, i); n > limit {
			t.Fatalf("part %d is %d units, limit %d", i, n, limit)
		}
	}
	return ps
}

// plainJoin is the parts' visible text, joined.
func plainJoin(t *testing.T, ps []string, mode markup.Mode) string {
	t.Helper()
	var b strings.Builder
	for _, p := range ps {
		v, err := markup.Plain(p, mode)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(v)
	}
	return b.String()
}

// TestPhotoCaptionFillsWithTheParagraph is issue 31's case: a title line
// and one 2,880-character paragraph give a caption of nearly 1,024
// characters ending at a word, and the rest in one reply.
func TestPhotoCaptionFillsWithTheParagraph(t *testing.T) {
	text := "Disk usage high on node-7 (cluster east)\n\n" + paragraph(2880)
	ps := photoSplit(t, text, markup.None)
	if len(ps) != 2 {
		t.Fatalf("%d parts, want the caption and one reply", len(ps))
	}
	n := markup.UTF16Len(ps[0])
	if n < telegram.MaxCaption-len("threshold ") || n > telegram.MaxCaption {
		t.Fatalf("caption is %d units, want close to %d", n, telegram.MaxCaption)
	}
	if !strings.HasSuffix(ps[0], " ") || strings.HasPrefix(ps[1], " ") {
		t.Fatalf("the cut is not between words: %q | %q", ps[0][len(ps[0])-20:], ps[1][:20])
	}
	if ps[0]+ps[1] != text {
		t.Fatal("caption and reply do not add up to the text")
	}
}

// TestPhotoCaptionBoldAcrossTheCut: in HTML a bold span across the
// caption's end is closed in the caption and re-opened in the reply; in
// MarkdownV2 the caption ends in front of it.
func TestPhotoCaptionBoldAcrossTheCut(t *testing.T) {
	for _, mode := range []markup.Mode{markup.HTML, markup.MarkdownV2} {
		t.Run(string(mode), func(t *testing.T) {
			open, closing, title := "<b>", "</b>", "<b>CPU</b> high\n\n"
			if mode == markup.MarkdownV2 {
				open, closing, title = "*", "*", "*CPU* high\n\n"
			}
			para := func(n int) string { return markup.Escape(paragraph(n), mode) }
			text := title + para(900) + " " + open + para(400) + closing + " " + para(1500)
			ps := photoSplit(t, text, mode)
			if len(ps) != 2 {
				t.Fatalf("%d parts, want 2", len(ps))
			}
			if n, _ := markup.VisibleLen(ps[0], mode); n < 900 {
				t.Fatalf("caption is %d units, want it filled", n)
			}
			end := " " + closing
			if mode == markup.MarkdownV2 {
				end = " " // joined MarkdownV2 parts could read otherwise: the caption stops before the span
			}
			if !strings.HasSuffix(ps[0], end) || !strings.HasPrefix(ps[1], open) {
				t.Fatalf("bold not closed and re-opened at the cut: %q | %q", ps[0][len(ps[0])-20:], ps[1][:20])
			}
			if want, _ := markup.Plain(text, mode); plainJoin(t, ps, mode) != want {
				t.Fatal("caption and reply do not add up to the text")
			}
		})
	}
}

// TestPhotoCaptionLongWord: a line holding one word longer than the room
// is cut inside the word; a word at the end of a line of words is not.
func TestPhotoCaptionLongWord(t *testing.T) {
	word := strings.Repeat("x", 1500)
	ps := photoSplit(t, "Title\n\n"+word, markup.None)
	if len(ps) != 2 || len(ps[0]) != telegram.MaxCaption || ps[0]+ps[1] != "Title\n\n"+word {
		t.Fatalf("parts of %v units, want a full caption and the rest", lens(ps))
	}
	text := "Title\n\n" + paragraph(700) + " " + word
	ps = photoSplit(t, text, markup.None)
	if len(ps) != 2 || !strings.HasSuffix(ps[0], " ") || ps[1] != word {
		t.Fatalf("parts of %v units, want the long word in the reply", lens(ps))
	}
}

// TestPhotoCaptionThatFits: a short text is the caption as it is.
func TestPhotoCaptionThatFits(t *testing.T) {
	if ps := photoSplit(t, "<b>CPU</b> high\n\nall good", markup.HTML); len(ps) != 1 || ps[0] != "<b>CPU</b> high\n\nall good" {
		t.Fatalf("parts %q", ps)
	}
}

func lens(ps []string) []int {
	n := make([]int, len(ps))
	for i, p := range ps {
		n[i] = markup.UTF16Len(p)
	}
	return n
}

// TestPhotoPartsRandom: random texts with entities, line breaks, long
// words and wide characters split into valid parts within their limits
// that add up to the text.
func TestPhotoPartsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 5))
	bits := map[markup.Mode][]string{
		markup.HTML:       {"word ", "longerword ", "\n", "\n\n", "<b>bold text</b> ", "<i>it <b>both</b></i>", "😀 ", "a&amp;b ", "<a href=\"https://x.example/\">link text</a> ", strings.Repeat("y", 300)},
		markup.MarkdownV2: {"word ", "longerword ", "\n", "\n\n", "*bold text* ", "_it *both*_ ", "😀 ", "a\\.b ", "[link text](https://x.example/) ", "__under__ ", strings.Repeat("y", 300)},
		markup.None:       {"word ", "\n", "\n\n", "😀 ", strings.Repeat("y", 300)},
	}
	skipped := 0
	for i := range 150 {
		mode := []markup.Mode{markup.HTML, markup.MarkdownV2, markup.None}[i%3]
		var b strings.Builder
		for range 10 + rng.IntN(400) {
			b.WriteString(bits[mode][rng.IntN(len(bits[mode]))])
		}
		text := b.String()
		if markup.Validate(text, mode) != nil {
			skipped++
			continue // adjacent delimiters ("_x_" "__y__") may not parse
		}
		ps := photoSplit(t, text, mode)
		want, _ := markup.Plain(text, mode)
		if got := plainJoin(t, ps, mode); strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(want), " ") {
			t.Fatalf("text %d (%s): parts do not add up to the text", i, mode)
		}
	}
	if skipped > 25 {
		t.Fatalf("%d of 50 MarkdownV2 texts did not parse", skipped)
	}
}
