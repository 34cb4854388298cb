package interact

import (
	"context"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/amsilence"
)

// amSilencer creates and finds silences in an Alertmanager
// (amsilence.Client).
type amSilencer interface {
	Create(ctx context.Context, base string, s amsilence.Silence) (string, error)
	Find(ctx context.Context, base, comment string) (string, error)
}

// Matcher names of a subject that are not the alert's own labels: the
// source matcher, and the prefix Herald puts before a label whose name is
// taken (internal/alerts silenceMatchers).
const (
	sourceMatcher = "source"
	labelPrefix   = "labels."
)

// silenceAtSource silences an acknowledged alert in the Alertmanager it
// came from, when its route asks for that (p.subj.Alertmanager), and
// returns the line that says so below the message ("" when the route does
// not ask). The silence matches the alert's labels, from at for the route's
// length. A retried press finds the silence an earlier attempt made by its
// comment, which names the press. An Alertmanager that does not answer
// leaves the acknowledgement standing, and the line says it was not
// silenced there.
func (h *handler) silenceAtSource(ctx context.Context, p *press, at time.Time) string {
	s := p.subj
	if s.Alertmanager == "" {
		return ""
	}
	var matchers []amsilence.Matcher
	for _, m := range s.Matchers {
		if m.Name == sourceMatcher {
			continue
		}
		matchers = append(matchers, amsilence.Matcher{Name: strings.TrimPrefix(m.Name, labelPrefix), Value: m.Value})
	}
	if len(matchers) == 0 {
		return ""
	}
	comment := "Acknowledged in Telegram by " + p.by() + " (Herald press " + p.q.ID + ")"
	until := at.Add(s.AlertmanagerSilence)
	var id string
	var err error
	if p.resumed {
		id, err = h.cfg.Alertmanager.Find(ctx, s.Alertmanager, comment)
	}
	if err == nil && id == "" {
		id, err = h.cfg.Alertmanager.Create(ctx, s.Alertmanager, amsilence.Silence{
			Matchers: matchers, StartsAt: at, EndsAt: until, CreatedBy: p.by() + " (Telegram)", Comment: comment})
	}
	if err != nil {
		p.log.Warn("the acknowledged alert was not silenced in Alertmanager", "error", err)
		return "⚠️ Not silenced in Alertmanager: it did not take the silence"
	}
	p.log.Info("acknowledged alert silenced in Alertmanager", "silence", id, "ends_at", until)
	return "🔕 Silenced in Alertmanager for " + span(s.AlertmanagerSilence) + " (until " + clock(until, h.cfg.Now()) + ")"
}
