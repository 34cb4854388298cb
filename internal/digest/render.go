package digest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/markup"
)

// Rendered is a digest laid out as Telegram messages.
type Rendered struct {
	// Texts are the messages, in parse mode HTML.
	Texts []string
	// PerText is how many items each message holds.
	PerText []int
	// Count is how many items the messages hold: the first Count of the
	// items given; the rest are to be carried to the next digest.
	Count int
	// SummaryCap is the length (UTF-16 units) summaries were shortened to,
	// or -1 when every summary is shown in full.
	SummaryCap int
}

// minSummary is the shortest a summary is cut to; below that it is left out
// and the item shows its title (and link) only.
const minSummary = 24

// Separators and fixed texts, as the user sees them; all count one UTF-16
// unit per byte but the bullet.
const (
	bullet    = "• "
	bulletLen = 2
	itemSep   = "\n\n"
	headerSep = "\n\n"
)

func headerPlain(items, part, parts int) string {
	noun := "items"
	if items == 1 {
		noun = "item"
	}
	s := "Digest · " + strconv.Itoa(items) + " " + noun
	if parts > 1 {
		s += " · " + strconv.Itoa(part) + "/" + strconv.Itoa(parts)
	}
	return s
}

func headerHTML(items, part, parts int) string {
	plain := headerPlain(items, part, parts)
	rest := strings.TrimPrefix(plain, "Digest")
	return "<b>Digest</b>" + markup.EscapeHTML(rest)
}

func footerPlain(carried int) string {
	return "+" + strconv.Itoa(carried) + " more in the next digest"
}

// prepared is one item ready for layout: cleaned texts and their lengths.
type prepared struct {
	title, link, summary string
	titleLen, summaryLen int
}

// prepare cleans an item. A title too long for a message on its own (only
// possible for items that bypassed validation, or with a small limit) is
// shortened; a link that cannot be one is shown as text before the summary.
func prepare(it jobs.DigestItem, maxTitle int) prepared {
	p := prepared{title: cleanTitle(it.Title), summary: cleanSummary(it.Summary)}
	if p.title == "" {
		p.title = "(untitled)"
	}
	p.title = shorten(p.title, maxTitle)
	switch u := strings.TrimSpace(it.URL); {
	case linkable(u):
		p.link = u
	case u != "":
		p.summary = strings.TrimSpace(cleanTitle(u) + "\n" + p.summary)
	}
	p.titleLen = markup.UTF16Len(p.title)
	p.summaryLen = markup.UTF16Len(p.summary)
	return p
}

// shown is how many units of a summary of n units are shown under cap c.
func shown(n, c int) int {
	switch {
	case n <= c:
		return n
	case c >= minSummary:
		return c
	}
	return 0
}

// cost is the visible length of an item under summary cap c.
func (p prepared) cost(c int) int {
	n := bulletLen + p.titleLen
	if s := shown(p.summaryLen, c); s > 0 {
		n += 1 + s
	}
	return n
}

// pack lays items out greedily, in order, into at most max messages of
// budget units each, and returns how many items went into each message.
// Greedy filling is monotone: larger items never let more of them fit.
func pack(items []prepared, c, budget, max int) []int {
	var per []int
	used := 0
	for _, it := range items {
		n := it.cost(c)
		if len(per) > 0 && used+len(itemSep)+n <= budget {
			per[len(per)-1]++
			used += len(itemSep) + n
			continue
		}
		if len(per) == max || n > budget {
			break
		}
		per = append(per, 1)
		used = n
	}
	return per
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// Render lays items out in order as at most maxMessages HTML messages of at
// most limit visible UTF-16 units each. It fits as many items as it can with
// titles and links only, then gives the room left to summaries: every
// summary is shortened to the same largest length that still fits them all
// (or left out when that is under 24 units). Items are never split across
// messages. The result depends on nothing but its arguments, so a retried
// digest renders the same messages.
func Render(items []jobs.DigestItem, maxMessages, limit int) (Rendered, error) {
	if len(items) == 0 {
		return Rendered{SummaryCap: -1}, nil
	}
	maxMessages = max(maxMessages, 1)
	n := len(items)
	reserve := markup.UTF16Len(headerPlain(n, maxMessages, maxMessages)) + len(headerSep) +
		len(itemSep) + markup.UTF16Len(footerPlain(n))
	budget := limit - reserve
	maxTitle := min(jobs.MaxItemTitleLen, budget-bulletLen)
	if maxTitle < 1 {
		return Rendered{}, fmt.Errorf("digest: a message limit of %d leaves no room for an item", limit)
	}
	ps := make([]prepared, n)
	for i, it := range items {
		ps[i] = prepare(it, maxTitle)
	}
	k := sum(pack(ps, 0, budget, maxMessages))
	if k == 0 {
		return Rendered{}, fmt.Errorf("digest: no item fits a message of %d units", limit)
	}
	longest := 0
	for _, p := range ps[:k] {
		longest = max(longest, p.summaryLen)
	}
	fits := func(c int) bool { return sum(pack(ps[:k], c, budget, maxMessages)) == k }
	c, capLen := longest, -1
	if !fits(longest) {
		lo, hi := 0, longest // fits(lo) holds, fits(hi) does not
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if fits(mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
		c, capLen = lo, lo
	}
	per := pack(ps[:k], c, budget, maxMessages)
	out := Rendered{PerText: per, Count: k, SummaryCap: capLen}
	next := 0
	for part, cnt := range per {
		var b strings.Builder
		b.WriteString(headerHTML(cnt, part+1, len(per)))
		b.WriteString(headerSep)
		for j := 0; j < cnt; j++ {
			if j > 0 {
				b.WriteString(itemSep)
			}
			writeItem(&b, ps[next], c)
			next++
		}
		if part == len(per)-1 && k < n {
			b.WriteString(itemSep)
			b.WriteString("<i>" + markup.EscapeHTML(footerPlain(n-k)) + "</i>")
		}
		text := b.String()
		// The arithmetic above is exact; this check turns a bug into an
		// error the caller handles, instead of a message Telegram refuses.
		if vl, err := markup.VisibleLen(text, markup.HTML); err != nil || vl > limit {
			return Rendered{}, fmt.Errorf("digest: rendered message %d is invalid (visible length %d of %d): %v", part+1, vl, limit, err)
		}
		out.Texts = append(out.Texts, text)
	}
	return out, nil
}

// writeItem renders one item: a bullet, its title (linked when it has a
// link) and its summary, shortened to c units.
func writeItem(b *strings.Builder, p prepared, c int) {
	b.WriteString(bullet)
	if p.link != "" {
		b.WriteString(`<a href="` + markup.EscapeHTML(p.link) + `">` + markup.EscapeHTML(p.title) + `</a>`)
	} else {
		b.WriteString("<b>" + markup.EscapeHTML(p.title) + "</b>")
	}
	switch s := shown(p.summaryLen, c); {
	case s == 0:
	case s >= p.summaryLen:
		b.WriteString("\n" + markup.EscapeHTML(p.summary))
	default:
		b.WriteString("\n" + markup.EscapeHTML(shorten(p.summary, c)))
	}
}
