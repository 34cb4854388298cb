package markup

import (
	"fmt"
	"strings"
)

// styleOf returns, for every visible character of d, a description of the
// formatting applied to it (entity kinds with their arguments, innermost last).
//
// A link without a URL uses its text as the URL; Split repeats that text as
// an explicit URL when it cuts such a link, unless the text is too long to be
// a URL. When ignoreLinks is set, link URLs are left out of the description.
func styleOf(d *doc, ignoreLinks bool) []string {
	var out []string
	styles := []string{""} // style of the text at each stack depth
	for i := range d.toks {
		t := &d.toks[i]
		switch t.kind {
		case tOpen:
			ent := &d.ents[t.ent]
			arg := ent.arg
			if ent.kind == kLink && ent.noURL {
				arg = d.entityText(t.ent) // Telegram uses the text as the URL
			}
			if ent.kind == kLink && ignoreLinks {
				arg = ""
			}
			styles = append(styles, styles[len(styles)-1]+fmt.Sprintf("%s(%s,%v)", ent.kind.name(), arg, ent.expandable))
		case tClose:
			styles = styles[:len(styles)-1]
		case tText:
			out = append(out, styles[len(styles)-1])
		}
	}
	return out
}

// checkSplit wraps checkSplitFull and keeps its report readable.
func checkSplit(text string, mode Mode, limit int) string {
	msg := checkSplitFull(text, mode, limit)
	if len(msg) > 3000 {
		msg = msg[:3000] + "..."
	}
	return msg
}

// checkSplitFull verifies the guarantees of Split for one input and returns a
// description of the first violation, or "".
func checkSplitFull(text string, mode Mode, limit int) string {
	parts, err := Split(text, mode, limit)
	if limit <= 0 {
		limit = MaxMessageLen
	}
	verr := Validate(text, mode)
	if (err == nil) != (verr == nil) {
		return fmt.Sprintf("Split error %v, Validate error %v", err, verr)
	}
	if len(parts) == 0 {
		return "no parts"
	}
	partMode := mode
	if err != nil {
		if _, ok := err.(*ParseError); !ok {
			return fmt.Sprintf("error %T is not *ParseError", err)
		}
		partMode = None
	}
	orig, _ := parse(text, partMode)
	if orig.visibleLen() <= limit {
		if len(parts) != 1 || parts[0] != text {
			return fmt.Sprintf("text fits but came back as %q", parts)
		}
		return ""
	}
	longAutoLink := false
	for i := range orig.ents {
		if e := &orig.ents[i]; e.kind == kLink && e.noURL && e.closeTok >= 0 && len(orig.entityText(i)) > maxTextURL {
			longAutoLink = true
		}
	}
	var plain strings.Builder
	var styles []string
	for i, p := range parts {
		d, perr := parse(p, partMode)
		if perr != nil {
			return fmt.Sprintf("part %d %q does not parse: %v", i, p, perr)
		}
		n := d.visibleLen()
		if n == 0 {
			return fmt.Sprintf("part %d %q is empty", i, p)
		}
		if n > limit {
			if pl := d.plain(); len([]rune(pl)) != 1 {
				return fmt.Sprintf("part %d %q has visible length %d > %d", i, p, n, limit)
			}
		}
		plain.WriteString(d.plain())
		styles = append(styles, styleOf(d, longAutoLink)...)
	}
	if got, want := plain.String(), orig.plain(); got != want {
		return fmt.Sprintf("plain texts rejoin to %q, want %q", got, want)
	}
	if partMode == None {
		if got := strings.Join(parts, ""); got != text {
			return fmt.Sprintf("plain parts rejoin to %q, want %q", got, text)
		}
		return ""
	}
	want := styleOf(orig, longAutoLink)
	// Cuts inside a MarkdownV2 quotation nested in other entities may drop
	// those outer entities (the outermost formatting) from a part.
	lossy := orig.lossyCuts() != nil
	vis := []rune(orig.plain())
	for i := range want {
		// A newline that ends a part inside a MarkdownV2 quotation is moved
		// out of the inline entities around it; formatting a line break has
		// no visible effect.
		if i < len(vis) && vis[i] == '\n' {
			continue
		}
		if styles[i] != want[i] && !(lossy && strings.HasSuffix(want[i], styles[i])) {
			return fmt.Sprintf("character %d (%q) styled %q, want %q; parts %q", i, string(vis[i]), styles[i], want[i], parts)
		}
	}
	return ""
}
