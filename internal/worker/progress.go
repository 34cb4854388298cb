package worker

import (
	"strconv"
	"strings"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/telegram"
)

// progress is what Redis remembers of a task's sending: how many parts went
// out, and how the rest of the text was split again after Telegram refused
// a part. It is written after each accepted part, before the task is acked.
type progress struct {
	done     int
	resplits []resplit // applied in order
	// last is the id of the last message sent (0: none or unknown): the
	// message that the parts after a photo reply to.
	last int
	// ids are the Telegram message ids of the parts sent, in order (the
	// ledger's record shows them); a record from an earlier version has
	// only last.
	ids []int
	// settled is the ledger's record of a message that is settled already
	// (sent, cancelled, ...): nothing is to be sent.
	settled *ledger.Record
}

// resplit re-splits the text from part from on: as plain text (after a
// parse error) and/or into parts of at most limit visible units (after a
// "message is too long").
type resplit struct {
	from  int
	plain bool
	limit int
}

// The record is "parts:plain_from:last_message_id[:resplits[:ids]]",
// resplits being "from.p|m.limit" and ids the message ids, each joined by
// commas. plain_from, the first plain re-split (-1 for none), is what
// earlier versions wrote and read. Once the message is settled the record
// is the ledger's (a JSON object), which keeps the progress of a message
// with parts still unsent (failed, then retried from the web UI).

// parseProgress reads a progress record ("" means none).
func parseProgress(v string) progress {
	if rec, ok := ledger.Decode(v); ok {
		if rec.State == ledger.StateFailed {
			return parseProgress(rec.Progress)
		}
		return progress{done: len(rec.MessageIDs), ids: rec.MessageIDs, settled: &rec}
	}
	var p progress
	f := strings.Split(v, ":")
	if len(f) < 2 {
		return p
	}
	p.done, _ = strconv.Atoi(f[0])
	if len(f) >= 3 {
		p.last, _ = strconv.Atoi(f[2])
	}
	if len(f) >= 4 && f[3] != "" {
		for _, r := range strings.Split(f[3], ",") {
			g := strings.Split(r, ".")
			if len(g) != 3 {
				continue
			}
			from, _ := strconv.Atoi(g[0])
			limit, _ := strconv.Atoi(g[2])
			p.resplits = append(p.resplits, resplit{from: from, plain: g[1] == "p", limit: limit})
		}
	}
	if len(f) >= 5 && f[4] != "" {
		for _, id := range strings.Split(f[4], ",") {
			n, _ := strconv.Atoi(id)
			p.ids = append(p.ids, n)
		}
	}
	if len(f) >= 4 && f[3] != "" {
		return p
	}
	if from, _ := strconv.Atoi(f[1]); from >= 0 && f[1] != "" {
		p.resplits = []resplit{{from: from, plain: true, limit: markup.MaxMessageLen}}
	}
	return p
}

// encode writes the record with the id of the last message sent.
func (p progress) encode(messageID int) string {
	plainFrom := -1
	rs := make([]string, len(p.resplits))
	for i, r := range p.resplits {
		m := "m"
		if r.plain {
			m = "p"
			if plainFrom < 0 {
				plainFrom = r.from
			}
		}
		rs[i] = strconv.Itoa(r.from) + "." + m + "." + strconv.Itoa(r.limit)
	}
	ids := make([]string, len(p.ids))
	for i, id := range p.ids {
		ids[i] = strconv.Itoa(id)
	}
	return strconv.Itoa(p.done) + ":" + strconv.Itoa(plainFrom) + ":" + strconv.Itoa(messageID) + ":" + strings.Join(rs, ",") +
		":" + strings.Join(ids, ",")
}

// limitAt is the length limit that part i of msg was cut to.
func limitAt(msg jobs.SendMessage, p progress, i int) int {
	limit := markup.MaxMessageLen
	if msg.Photo != nil && i == 0 {
		limit = telegram.MaxCaption
	}
	for _, r := range p.resplits {
		if r.from <= i {
			limit = r.limit
		}
	}
	return limit
}

// minPartLen is the shortest limit a refused part is re-split to; a text
// still refused at that length is archived.
const minPartLen = 256

// shorterLimit chooses the limit to re-split from a part that Telegram
// refused as too long: the part scaled down to fit were Telegram counting
// its markup too, and at most three quarters of the limit it was cut to.
func shorterLimit(limit int, text string, mode markup.Mode) (int, bool) {
	next := limit * 3 / 4
	raw := 0
	for _, r := range text {
		raw += markup.RuneUTF16Len(r)
	}
	if visible, err := markup.VisibleLen(text, mode); err == nil && raw > markup.MaxMessageLen && visible > 0 {
		next = min(next, visible*markup.MaxMessageLen/raw*95/100)
	}
	return next, next >= minPartLen
}

// parts splits the text as it will be sent, given the progress. The split
// is deterministic, so a retried task resumes at the same part.
func parts(msg jobs.SendMessage, p progress) ([]string, []markup.Mode) {
	mode := markup.Mode(msg.ParseMode)
	ps, err := markup.Split(msg.Text, mode, markup.MaxMessageLen)
	if err != nil {
		// Herald's parser rejects the markup; Telegram would too. Send it as
		// plain text from the start (Split already cut it as plain text).
		mode = markup.None
	}
	ps = dropBlank(ps, mode)
	if msg.Photo != nil {
		ps, mode = photoParts(msg.Text, mode)
	}
	modes := make([]markup.Mode, len(ps))
	for i := range modes {
		modes[i] = mode
	}
	for _, r := range p.resplits {
		if r.from < 0 || r.from >= len(ps) || r.limit < 1 {
			continue
		}
		m := modes[r.from]
		if r.plain {
			m = markup.None
		}
		rest := strings.Join(ps[r.from:], "")
		sub, err := markup.Split(rest, m, r.limit)
		if err != nil {
			m = markup.None
		}
		sub = dropBlank(sub, m)
		ps, modes = append(ps[:r.from:r.from], sub...), modes[:r.from:r.from]
		for range sub {
			modes = append(modes, m)
		}
	}
	return ps, modes
}

// photoParts splits a photo's text: the caption first (at most
// telegram.MaxCaption visible units, filled as fillCaption does, possibly
// blank), then the rest in parts of a text message's length.
func photoParts(text string, mode markup.Mode) ([]string, markup.Mode) {
	if caption, rest, ok := fillCaption(text, mode); ok {
		more, err := markup.Split(rest, mode, markup.MaxMessageLen)
		if err == nil && len(dropBlank([]string{caption}, mode)) == 1 {
			return append([]string{caption}, dropBlank(more, mode)...), mode
		}
	}
	first, err := markup.Split(text, mode, telegram.MaxCaption)
	if err != nil {
		mode = markup.None
	}
	first = dropBlank(first, mode)
	if len(first) == 0 {
		return []string{""}, mode
	}
	rest, err := markup.Split(strings.Join(first[1:], ""), mode, markup.MaxMessageLen)
	if err != nil {
		mode = markup.None
	}
	return append(first[:1:1], dropBlank(rest, mode)...), mode
}

// dropBlank removes parts that show nothing but white space (a run of
// spaces longer than a message): Telegram refuses an empty message.
func dropBlank(ps []string, mode markup.Mode) []string {
	out := ps[:0]
	for _, p := range ps {
		visible, err := markup.Plain(p, mode)
		if err != nil {
			visible = p
		}
		if strings.TrimSpace(visible) != "" {
			out = append(out, p)
		}
	}
	return out
}
