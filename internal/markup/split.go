package markup

// Split cuts text into parts whose VisibleLen is <= limit each, preferring (in order) paragraph breaks ("\n\n"), line
// breaks, spaces, then any character boundary that is not inside a UTF-16 surrogate pair, an HTML entity (&amp;), a tag,
// or a MarkdownV2 escape (\x). Every part is valid in mode: formatting open at a cut is closed at the end of the part
// and re-opened (same tags/attributes, e.g. <a href="...">, <pre><code class="language-go">) at the start of the next.
// The separator stays at the end of the earlier part, so the parts' Plain texts concatenated equal Plain(text).
// Text that fits is returned as one part unchanged. If text does not parse in mode, Split splits it as plain
// text (mode None rules) and returns the parts together with the *ParseError, so a caller can send it downgraded.
// limit <= 0 means MaxMessageLen.
//
// Within a priority Split takes the last possible cut, and it avoids cutting
// inside a custom emoji or in front of a combining mark, joiner or variation
// selector unless nothing else fits. A single character wider than limit (an
// emoji, two UTF-16 units, with limit 1) gets a part of its own. Characters
// that Telegram accepts unescaped although its documentation asks for an
// escape (a bare '&' in HTML, a lone '\' in MarkdownV2) are escaped in the
// parts, and a link without an explicit URL that is cut gets its full text as
// URL in every part, so the meaning of the text does not change.
//
// Two corner cases keep the guarantees above but not everything else: a
// MarkdownV2 block quotation nested inside another entity ("*>quote\n*") can
// only be closed at a newline, so when nothing else fits and the cut is
// inside a line of it, the entities around the quotation are left out of
// that part; and a run of white space longer than limit yields parts that
// hold only white space, which Telegram rejects as empty messages.
func Split(text string, mode Mode, limit int) ([]string, error) {
	if limit <= 0 {
		limit = MaxMessageLen
	}
	d, err := parse(text, mode)
	var perr error
	if err != nil {
		pe, ok := err.(*ParseError)
		if !ok {
			return nil, err
		}
		perr = pe
		d = parsePlain(text)
	}
	if d.visibleLen() <= limit {
		return []string{text}, perr
	}
	return d.split(limit), perr
}

// cut priorities, best first.
const (
	cutParagraph = iota
	cutLine
	cutSpace
	cutAny
	cutGlued
	cutLossy
	cutKinds
)

// split cuts a parsed text that is longer than limit.
func (d *doc) split(limit int) []string {
	atoms := make([]int, 0, len(d.toks))
	for i := range d.toks {
		if d.toks[i].kind == tText {
			atoms = append(atoms, i)
		}
	}
	cuts := chooseCuts(d, atoms, d.lossyCuts(), limit)
	// Token boundaries: a part ends after its last visible character and the
	// closing markup that directly follows it.
	bounds := make([]int, 0, len(cuts)+2)
	bounds = append(bounds, 0)
	for _, c := range cuts {
		t := atoms[c-1] + 1
		for t < len(d.toks) && d.toks[t].kind == tClose {
			t++
		}
		bounds = append(bounds, t)
	}
	bounds = append(bounds, len(d.toks))
	if d.mode == None {
		parts := make([]string, 0, len(bounds)-1)
		for k := 0; k+1 < len(bounds); k++ {
			parts = append(parts, d.src[d.toks[bounds[k]].start:d.toks[bounds[k+1]-1].end])
		}
		return parts
	}
	// The entities open at each boundary, and which entities are cut at all.
	stacks := make([][]int, len(bounds))
	split := make([]bool, len(d.ents))
	var stack []int
	b := 1
	for t := 0; t < len(d.toks) && b < len(bounds)-1; t++ {
		switch d.toks[t].kind {
		case tOpen:
			stack = append(stack, d.toks[t].ent)
		case tClose:
			stack = stack[:len(stack)-1]
		}
		for b < len(bounds)-1 && bounds[b] == t+1 {
			stacks[b] = append([]int(nil), stack...)
			for _, e := range stack {
				split[e] = true
			}
			b++
		}
	}
	r := renderer{d: d, split: split}
	parts := make([]string, 0, len(bounds)-1)
	for k := 0; k+1 < len(bounds); k++ {
		parts = append(parts, r.part(bounds[k], bounds[k+1], stacks[k], stacks[k+1]))
	}
	return parts
}

// chooseCuts returns, for every part but the last, the index in atoms of the
// first visible character of the next part.
func chooseCuts(d *doc, atoms []int, lossy []bool, limit int) []int {
	var cuts []int
	n := len(atoms)
	for s := 0; ; {
		e, w := s, 0
		for e < n && w+int(d.toks[atoms[e]].u16) <= limit {
			w += int(d.toks[atoms[e]].u16)
			e++
		}
		if e == n {
			return cuts
		}
		if e == s {
			e = s + 1 // a character wider than limit: alone in its part
			if e == n {
				return cuts
			}
		}
		c := bestCut(d, atoms, lossy, s, e)
		cuts = append(cuts, c)
		s = c
	}
}

// bestCut picks the cut in (s, e] with the best priority, the latest one
// among equals.
func bestCut(d *doc, atoms []int, lossy []bool, s, e int) int {
	var best [cutKinds]int
	for c := e; c > s; c-- {
		k := cutKind(d, atoms, s, c)
		if lossy != nil && lossy[c-1] {
			k = cutLossy
		}
		if best[k] == 0 {
			best[k] = c
			if k == cutParagraph {
				return c
			}
		}
	}
	for _, c := range best {
		if c != 0 {
			return c
		}
	}
	return e
}

// lossyCuts marks, for MarkdownV2, the visible characters after which a cut
// would lose formatting: a block quotation can only end at a newline or at
// the end of the text, so when it is nested in other entities and the cut is
// not right after a raw newline, those outer entities cannot be closed after
// it and are left out of the part (see renderer.mdPart). It returns nil when
// no cut is lossy.
func (d *doc) lossyCuts() []bool {
	if d.mode != MarkdownV2 {
		return nil
	}
	var lossy []bool
	var stack []int
	atom, pending := -1, -1
	check := func() {
		if pending < 0 {
			return
		}
		for i := 1; i < len(stack); i++ {
			if d.ents[stack[i]].kind == kQuote && d.src[d.toks[pending].start:d.toks[pending].end] != "\n" {
				if lossy == nil {
					lossy = make([]bool, d.nText)
				}
				lossy[atom] = true
			}
		}
		pending = -1
	}
	for t := range d.toks {
		if d.toks[t].kind != tClose {
			check()
		}
		switch d.toks[t].kind {
		case tOpen:
			stack = append(stack, d.toks[t].ent)
		case tClose:
			stack = stack[:len(stack)-1]
		case tText:
			atom++
			pending = t
		}
	}
	check()
	return lossy
}

// cutKind classifies a cut in front of atoms[c] for a part starting at atoms[s].
func cutKind(d *doc, atoms []int, s, c int) int {
	if d.toks[atoms[c]].glue {
		return cutGlued
	}
	switch d.toks[atoms[c-1]].vis {
	case "\n":
		if c-2 >= s && d.toks[atoms[c-2]].vis == "\n" {
			return cutParagraph
		}
		return cutLine
	case " ", "\t":
		return cutSpace
	}
	return cutAny
}
