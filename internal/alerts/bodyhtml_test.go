package alerts

import (
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/markup"
)

// TestBodyHTML: an HTML route shows the sender's formatted body; other
// modes, an invalid BodyHTML and a body cut to fit show the plain body.
func TestBodyHTML(t *testing.T) {
	t.Parallel()
	a := Alert{Title: "Deploy failed", Body: "stage migrate failed", BodyHTML: "<b>stage</b> <code>migrate</code> failed"}
	text, _ := renderOne(t, "HTML", "", a)
	if !strings.Contains(text, a.BodyHTML) {
		t.Errorf("HTML route: the formatted body is missing:\n%s", text)
	}
	text, _ = renderOne(t, "MarkdownV2", "", a)
	if !strings.Contains(text, "stage migrate failed") || strings.Contains(text, "<b>") {
		t.Errorf("MarkdownV2 route: want the plain body:\n%s", text)
	}
	bad := a
	bad.BodyHTML = "<b>stage migrate failed"
	text, _ = renderOne(t, "HTML", "", bad)
	if !strings.Contains(text, "stage migrate failed") || strings.Contains(text, "<b>stage") {
		t.Errorf("invalid BodyHTML: want the plain body:\n%s", text)
	}
	// A body cut to fit (renderFitting halves it when the text is too
	// long) is the plain body, cut.
	d := newMessageData(&a, "r", markup.HTML, renderLimits{bodyRunes: 5})
	if string(d.Body) != markup.TruncateRunes(a.Body, 5) {
		t.Errorf("a body cut to fit = %q, want the plain body cut", d.Body)
	}
	d = newMessageData(&a, "r", markup.HTML, renderLimits{bodyRunes: 100})
	if string(d.Body) != a.BodyHTML {
		t.Errorf("a whole body = %q, want BodyHTML", d.Body)
	}
}
