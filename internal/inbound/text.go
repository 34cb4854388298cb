package inbound

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The converters turn a sender's formatting into marked text (rich.go):
// what it reads as plain text, with the emphasis, code, pre and links it
// marks. Each reads its input once, left to right, with a stack of the
// marks still open on the line: linear in the input, whatever it holds. A
// mark that does not close stays as literal text.

// dialect is the formatting a converter reads.
type dialect uint8

const (
	// slackDialect is Slack's mrkdwn: *bold* _italic_ ~strike~ `code`
	// ```pre```, <url|label> and <!here>-like references, with &amp;
	// &lt; &gt; escaped.
	slackDialect dialect = iota
	// markdownDialect is Discord's Markdown (and the subset Teams, ntfy
	// and Gotify render): **bold** *italic* _italic_ __underline__
	// ~~strike~~ ||spoiler|| `code` ```pre```, [label](url), <url>,
	// headings, quotes, bullets, \ escapes, mentions and <t:…> times.
	markdownDialect
)

// slackText converts Slack mrkdwn: <url|label> is a link (plain text
// "label (url)"), <!here> @here, <@U1> @U1, <#C1|name> #name,
// <!date^…|fallback> its fallback; Slack's three escaped characters are
// decoded.
func slackText(s string) string { return convert(sanitize(s), slackDialect) }

// markdownText converts Markdown: [label](url) and <url> are links,
// headings bold, quote marks dropped, bullets "•", Discord mentions and
// <t:…> timestamps made readable.
func markdownText(s string) string { return convert(sanitize(s), markdownDialect) }

// convert reads code blocks (```…```) apart, as pre, and the lines
// between them with convertLines. A fence that does not close is text.
func convert(s string, d dialect) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	fences := true
	for s != "" {
		i, j := -1, -1
		if fences {
			if i = strings.Index(s, "```"); i >= 0 {
				j = strings.Index(s[i+3:], "```")
			}
		}
		if j < 0 {
			b.WriteString(convertLines(s, d))
			break
		}
		b.WriteString(convertLines(s[:i], d))
		code := dropLanguage(s[i+3 : i+3+j])
		if d == slackDialect {
			code = slackUnescape(code)
		}
		b.WriteString(wrap(stPre, code))
		s = s[i+3+j+3:]
	}
	return b.String()
}

// dropLanguage removes the language line a fence may start with.
func dropLanguage(code string) string {
	nl := strings.IndexByte(code, '\n')
	if nl < 0 {
		return code
	}
	for i := 0; i < nl; i++ {
		c := code[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_+-", c) >= 0) {
			return code
		}
	}
	return code[nl+1:]
}

// convertLines converts lines outside code blocks, one at a time:
// emphasis does not span lines.
func convertLines(s string, d dialect) string {
	var b strings.Builder
	for n := 0; ; n++ {
		line, rest, more := strings.Cut(s, "\n")
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(convertLine(line, d))
		if !more {
			return b.String()
		}
		s = rest
	}
}

// convertLine converts one line: its block marks (heading, quote, bullet),
// then its inline marks.
func convertLine(line string, d dialect) string {
	heading := false
	if d == markdownDialect {
		if h := headingMark(line); h > 0 {
			heading = !strings.HasPrefix(line, "-#")
			line = line[h:]
		}
	}
	line = dropQuote(line, d)
	prefix := ""
	if d == markdownDialect {
		trimmed := strings.TrimLeft(line, " \t")
		if len(trimmed) > 1 && strings.IndexByte("-*+", trimmed[0]) >= 0 && trimmed[1] == ' ' {
			prefix = line[:len(line)-len(trimmed)] + "• "
			line = strings.TrimLeft(trimmed[1:], " ")
		}
	}
	out := prefix + inline(line, d)
	if heading {
		out = wrap(stBold, out)
	}
	return out
}

// headingMark returns the length of a Markdown heading mark ("## ",
// Discord's "-# "), or 0.
func headingMark(line string) int {
	i := 0
	switch {
	case strings.HasPrefix(line, "-#"):
		i = 2
	default:
		for i < len(line) && i < 6 && line[i] == '#' {
			i++
		}
	}
	if i == 0 || i >= len(line) || line[i] != ' ' {
		return 0
	}
	for i < len(line) && line[i] == ' ' {
		i++
	}
	return i
}

// dropQuote removes the quote marks a line starts with (">", ">>>", and
// Slack's escaped "&gt;").
func dropQuote(line string, d dialect) string {
	cut := false
	for {
		switch {
		case strings.HasPrefix(line, ">"):
			line = line[1:]
		case strings.HasPrefix(line, "&gt;"):
			line = line[4:]
		default:
			if cut {
				line = strings.TrimPrefix(line, " ")
			}
			return line
		}
		cut = true
	}
}

// piece is a part of a line: text (marked text, final) or a run of one
// delimiter character that may open or close a style.
type piece struct {
	text        string
	delim       byte
	n           int
	open, close bool
	paired      bool
}

// line holds the pieces of one line being converted.
type lineConv struct {
	s       string
	d       dialect
	ps      []piece
	noTicks [8]bool // code spans of n backticks have no closing run left
}

// inline converts the inline marks of one line.
func inline(s string, d dialect) string {
	c := &lineConv{s: s, d: d, ps: make([]piece, 0, 8)}
	for i := 0; i < len(s); {
		i = c.step(i)
	}
	c.pair()
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := range c.ps {
		b.WriteString(c.ps[i].text)
	}
	return b.String()
}

// text adds text read from the input.
func (c *lineConv) text(t string) {
	if c.d == slackDialect {
		t = slackUnescape(t)
	}
	c.add(t)
}

// add adds marked text.
func (c *lineConv) add(t string) { c.ps = append(c.ps, piece{text: t}) }

// special reports whether byte b may start a mark.
func (c *lineConv) special(b byte) bool {
	if c.d == slackDialect {
		return strings.IndexByte("`<*_~", b) >= 0
	}
	return strings.IndexByte("\\`<[!*_~|", b) >= 0
}

// step reads what starts at i and returns where the next read starts.
func (c *lineConv) step(i int) int {
	s := c.s
	switch ch := s[i]; {
	case ch == '\\' && c.d == markdownDialect && i+1 < len(s) && strings.IndexByte(mdEscapable, s[i+1]) >= 0:
		c.add(s[i+1 : i+2])
		return i + 2
	case ch == '`':
		return c.code(i)
	case ch == '<':
		if out, n, ok := c.angle(i); ok {
			c.add(out)
			return i + n
		}
		c.text("<")
		return i + 1
	case (ch == '[' || ch == '!') && c.d == markdownDialect:
		if out, n, ok := mdLinkAt(s, i); ok {
			c.add(out)
			return i + n
		}
		c.text(s[i : i+1])
		return i + 1
	case c.delimiter(ch):
		return c.delim(i)
	default:
		j := i + 1
		for j < len(s) && !c.special(s[j]) {
			j++
		}
		c.text(s[i:j])
		return j
	}
}

// mdEscapable are the characters a backslash makes literal in Markdown.
const mdEscapable = "\\*_~|`>#[]()-<:"

// code reads a code span: a run of backticks up to the next run as long.
func (c *lineConv) code(i int) int {
	s := c.s
	n := 1
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	if n < len(c.noTicks) && !c.noTicks[n] {
		for j := i + n; j < len(s); {
			k := strings.IndexByte(s[j:], '`')
			if k < 0 {
				break
			}
			k += j
			m := 1
			for k+m < len(s) && s[k+m] == '`' {
				m++
			}
			if m == n {
				code := s[i+n : k]
				if c.d == slackDialect {
					code = slackUnescape(code)
				}
				c.add(wrap(stCode, code))
				return k + m
			}
			j = k + m
		}
		c.noTicks[n] = true
	}
	c.text(s[i : i+n])
	return i + n
}

// delimiter reports whether ch may delimit a style in the dialect.
func (c *lineConv) delimiter(ch byte) bool {
	if c.d == slackDialect {
		return ch == '*' || ch == '_' || ch == '~'
	}
	return ch == '*' || ch == '_' || ch == '~' || ch == '|'
}

// delim reads a run of one delimiter character and whether it may open
// (followed by no space) or close (preceded by no space) a style. In
// Slack's mrkdwn, and for Markdown's _, a run inside a word does neither.
func (c *lineConv) delim(i int) int {
	s := c.s
	ch := s[i]
	n := 1
	for i+n < len(s) && s[i+n] == ch {
		n++
	}
	before, _ := utf8.DecodeLastRuneInString(s[:i])
	after, _ := utf8.DecodeRuneInString(s[i+n:])
	if i == 0 {
		before = ' '
	}
	if i+n == len(s) {
		after = ' '
	}
	p := piece{text: s[i : i+n], delim: ch, n: n, open: !unicode.IsSpace(after), close: !unicode.IsSpace(before)}
	if c.d == slackDialect || ch == '_' {
		p.open = p.open && !isWord(before)
		p.close = p.close && !isWord(after)
	}
	if i == 0 {
		p.close = false
	}
	if i+n == len(s) {
		p.open = false
	}
	c.ps = append(c.ps, p)
	return i + n
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// styles returns the styles a run of n ch delimits, outermost first; nil
// when it delimits none.
func (c *lineConv) styles(ch byte, n int) []style {
	if c.d == slackDialect {
		if n != 1 {
			return nil
		}
		return map[byte][]style{'*': {stBold}, '_': {stItalic}, '~': {stStrike}}[ch]
	}
	switch {
	case ch == '*' && n == 1, ch == '_' && n == 1:
		return []style{stItalic}
	case ch == '*' && n == 2:
		return []style{stBold}
	case ch == '*' && n == 3:
		return []style{stBold, stItalic}
	case ch == '_' && n == 2:
		return []style{stUnderline}
	case ch == '_' && n == 3:
		return []style{stUnderline, stItalic}
	case ch == '~' && n == 2:
		return []style{stStrike}
	case ch == '|' && n == 2:
		return []style{stSpoiler}
	}
	return nil
}

// pair matches closing runs with the latest opening run of the same
// character and length. The openers left open between a pair stay text,
// so pairs nest. Each run is pushed and popped at most once.
func (c *lineConv) pair() {
	var stack []int              // the unmatched openers, by piece index
	byKind := map[[2]int][]int{} // the same, per character and length
	for i := range c.ps {
		p := &c.ps[i]
		if p.delim == 0 {
			continue
		}
		sts := c.styles(p.delim, p.n)
		if sts == nil {
			continue
		}
		k := [2]int{int(p.delim), p.n}
		if opens := byKind[k]; p.close && len(opens) > 0 {
			o := opens[len(opens)-1]
			for len(stack) > 0 {
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				tk := [2]int{int(c.ps[top].delim), c.ps[top].n}
				byKind[tk] = byKind[tk][:len(byKind[tk])-1]
				if top == o {
					break
				}
			}
			c.ps[o].text, c.ps[o].paired = openMarks(sts), true
			p.text, p.paired = closeMarks(sts), true
			continue
		}
		if p.open {
			stack = append(stack, i)
			byKind[k] = append(byKind[k], i)
		}
	}
}

func openMarks(sts []style) string {
	var b strings.Builder
	for _, st := range sts {
		b.WriteRune(markOpen + rune(st))
	}
	return b.String()
}

func closeMarks(sts []style) string {
	var b strings.Builder
	for i := len(sts) - 1; i >= 0; i-- {
		b.WriteRune(markClose + rune(sts[i]))
	}
	return b.String()
}

// angle reads a <…> reference at i: Slack's links, mentions and dates;
// Markdown's autolinks, Discord's mentions, emoji and timestamps. n is
// its length.
func (c *lineConv) angle(i int) (out string, n int, ok bool) {
	s := c.s
	end := strings.IndexAny(s[i+1:], "<>")
	if end < 0 || s[i+1+end] != '>' || end == 0 {
		return "", 0, false
	}
	in := s[i+1 : i+1+end]
	if c.d == slackDialect {
		return slackReference(in), end + 2, true
	}
	if out, ok := discordReference(in); ok {
		return out, end + 2, true
	}
	return "", 0, false
}

// slackReference renders the inside of one <...>.
func slackReference(in string) string {
	target, raw, hasLabel := strings.Cut(in, "|")
	label := slackUnescape(raw)
	switch {
	case strings.HasPrefix(target, "!date^"):
		return label
	case strings.HasPrefix(target, "!subteam^"):
		return firstOf(label, "@group")
	case strings.HasPrefix(target, "!"):
		return "@" + strings.TrimPrefix(target, "!")
	case strings.HasPrefix(target, "@"), strings.HasPrefix(target, "#"):
		if hasLabel && label != "" {
			return target[:1] + strings.TrimPrefix(label, target[:1])
		}
		return target
	}
	target = slackUnescape(target)
	if !linkable(target) {
		if !hasLabel || label == "" || label == target {
			return target
		}
		return label + " (" + target + ")"
	}
	return linkTo(target, inline(raw, slackDialect))
}

// discordReference renders the inside of one <...> in Markdown: an
// autolink, a mention, a custom emoji or a timestamp.
func discordReference(in string) (string, bool) {
	switch {
	case strings.HasPrefix(in, "http://") || strings.HasPrefix(in, "https://"):
		if strings.ContainsAny(in, " \t") || !linkable(in) {
			return "", false
		}
		return linkTo(in, ""), true
	case strings.HasPrefix(in, "t:"):
		num, _, _ := strings.Cut(in[2:], ":")
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || len(num) > 14 {
			return "", false
		}
		return time.Unix(n, 0).UTC().Format("2006-01-02 15:04 UTC"), true
	case strings.HasPrefix(in, "#"):
		if allDigits(in[1:]) {
			return in, true
		}
	case strings.HasPrefix(in, "@"):
		id := strings.TrimLeft(in[1:], "!&")
		if allDigits(id) && len(in)-len(id) <= 2 {
			return "@" + id, true
		}
	case strings.HasPrefix(in, ":"), strings.HasPrefix(in, "a:"):
		parts := strings.Split(strings.TrimPrefix(in, "a"), ":")
		if len(parts) == 3 && parts[1] != "" && allDigits(parts[2]) {
			return ":" + parts[1] + ":", true
		}
	}
	return "", false
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// mdLinkAt reads a Markdown link at i: [label](url), ![alt](url),
// [label](<url>), with an optional "title". The label is text.
func mdLinkAt(s string, i int) (out string, n int, ok bool) {
	start := i
	if s[i] == '!' {
		if i+1 >= len(s) || s[i+1] != '[' {
			return "", 0, false
		}
		i++
	}
	close := strings.IndexAny(s[i+1:], "[]")
	if close < 0 || s[i+1+close] != ']' {
		return "", 0, false
	}
	label := inline(strings.TrimSpace(s[i+1:i+1+close]), markdownDialect)
	j := i + 1 + close + 1
	if j >= len(s) || s[j] != '(' {
		return "", 0, false
	}
	j++
	angled := j < len(s) && s[j] == '<'
	if angled {
		j++
	}
	u := j
	for j < len(s) && strings.IndexByte(") >\t[", s[j]) < 0 {
		j++
	}
	target := s[u:j]
	if angled && j < len(s) && s[j] == '>' {
		j++
	}
	if j < len(s) && s[j] == ' ' { // a "title"
		t := strings.TrimLeft(s[j:], " ")
		if t == "" || t[0] != '"' {
			return "", 0, false
		}
		q := strings.IndexByte(t[1:], '"')
		if q < 0 {
			return "", 0, false
		}
		j = len(s) - len(t) + 1 + q + 1
	}
	if j >= len(s) || s[j] != ')' || !(strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://")) || !linkable(target) {
		return "", 0, false
	}
	return linkTo(target, label), j + 1 - start, true
}

// slackUnescape decodes the three entities Slack escapes in text.
func slackUnescape(s string) string {
	if strings.IndexByte(s, '&') < 0 {
		return s
	}
	return slackUnescaper.Replace(s)
}

var slackUnescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// firstOf returns the first non-blank value, trimmed.
func firstOf(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// firstLine returns the first non-blank line of s.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// joinBlocks joins the non-blank blocks with blank lines.
func joinBlocks(bs ...string) string {
	out := bs[:0:0]
	for _, b := range bs {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return strings.Join(out, "\n\n")
}
