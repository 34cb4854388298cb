package worker

import (
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/markup"
)

func TestPartsSkipBlankAndResumePlain(t *testing.T) {
	text := "head\n" + strings.Repeat(" ", 5000) + "\n<b>tail</b>"
	msg := jobs.SendMessage{Text: text, ParseMode: "HTML"}
	ps, modes := parts(msg, progress{})
	for i, p := range ps {
		if v, _ := markup.Plain(p, modes[i]); strings.TrimSpace(v) == "" {
			t.Fatalf("part %d is blank", i)
		}
	}
	if len(ps) < 2 || modes[0] != markup.HTML {
		t.Fatalf("parts = %d, modes %v", len(ps), modes)
	}
	// After a parse error at part 1, parts from 1 on go as plain text, and
	// the same progress always yields the same parts.
	a, am := parts(msg, progress{done: 1, resplits: []resplit{{from: 1, plain: true, limit: markup.MaxMessageLen}}})
	b, _ := parts(msg, progress{done: 1, resplits: []resplit{{from: 1, plain: true, limit: markup.MaxMessageLen}}})
	if strings.Join(a, "|") != strings.Join(b, "|") {
		t.Fatal("split is not deterministic")
	}
	if am[0] != markup.HTML || am[len(am)-1] != markup.None {
		t.Fatalf("modes after downgrade = %v", am)
	}
	if !strings.Contains(a[len(a)-1], "<b>tail</b>") {
		t.Fatalf("plain part lost the raw markup: %q", a[len(a)-1])
	}
}
