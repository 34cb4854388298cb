package alerts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/markup"
)

// threadKey names an alert's thread at one destination of one route:
// "alert/<identity>/<route>", and "/<topic>" after it for a forum topic.
// The worker keeps threads per bot and chat; the route's name keeps apart
// the messages two routes send to one chat about the same alert, and the
// topic those of one route in two topics of a chat. The namespace
// (jobs.AlertThreadSpace) keeps them from every thread that a message of
// the API opens, so a sender cannot reply to or edit an alert's message by
// naming its key. A key longer than jobs.MaxThreadKey bytes is replaced by
// "alert/sha256:" and the digest of what follows the namespace.
func threadKey(identity, route string, d destination) string {
	k := identity + "/" + route
	if d.thread != 0 {
		k += "/" + strconv.Itoa(d.thread)
	}
	if len(jobs.AlertThreadSpace)+len(k) <= jobs.MaxThreadKey {
		return jobs.AlertThreadSpace + k
	}
	sum := sha256.Sum256([]byte(k))
	return jobs.AlertThreadSpace + "sha256:" + hex.EncodeToString(sum[:])
}

// threadFor is the thread of a's message on route rt. A firing alert opens
// the thread (threadModes turns that into a reply when it is open
// already). A resolved alert closes it: as a reply to its first message,
// as an edit of it, or, with on_resolve: new, as a message of its own (an
// "open" that closes at once: nothing refers to the first message).
func threadFor(a *Alert, rt *route, key string) *jobs.Thread {
	if a.Status != StatusResolved {
		return &jobs.Thread{Key: key, Mode: jobs.ThreadOpen}
	}
	switch rt.onResolve {
	case resolveEdit:
		return &jobs.Thread{Key: key, Mode: jobs.ThreadEdit, Close: true}
	case resolveNew:
		return &jobs.Thread{Key: key, Mode: jobs.ThreadOpen, Close: true}
	}
	return &jobs.Thread{Key: key, Mode: jobs.ThreadReply, Close: true}
}

// threadModes decides, for each firing message that is about to be
// enqueued, whether it opens its thread or repeats an alert whose thread
// is open: its record exists in Redis ("pending" while the first message
// waits in the queue, its message id once sent), or an earlier message of
// this dispatch opens it. A repeat replies to the first message. The
// records are read in one pipeline; a Redis failure wraps
// jobs.ErrUnavailable.
func (r *Router) threadModes(ctx context.Context, outs []outgoing) error {
	var check []*jobs.Thread
	var recs []string
	for i := range outs {
		o := &outs[i]
		t := o.req.Message.Thread
		if t == nil || t.Mode != jobs.ThreadOpen || t.Close || !o.hold.until.IsZero() {
			continue
		}
		check = append(check, t)
		recs = append(recs, keys.Bot(o.req.Message.Bot).Thread(o.req.Message.Chat, t.Key))
	}
	if len(check) == 0 {
		return nil
	}
	cmds := make([]*redis.IntCmd, len(recs))
	if _, err := r.cfg.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range recs {
			cmds[i] = p.Exists(ctx, k)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("%w: alerts: read the alerts' threads: %w", jobs.ErrUnavailable, err)
	}
	opened := map[string]bool{}
	for i, t := range check {
		if cmds[i].Val() > 0 || opened[recs[i]] {
			t.Mode = jobs.ThreadReply
		}
		opened[recs[i]] = true
	}
	return nil
}

// attachButtons gives o's message the keyboard of its route, for a
// firing alert in a thread: the subject the buttons act on (the alert's
// silence matchers, the thread, the text as sent, who may press) is stored
// for jobs.ThreadRetention. Without labels to silence by, an alert gets
// the acknowledge button only. A Redis failure wraps jobs.ErrUnavailable.
func (r *Router) attachButtons(ctx context.Context, o *outgoing) error {
	m := &o.req.Message
	a, rt := o.alert, o.route
	if r.cfg.Redis == nil || len(rt.buttons) == 0 || m.Thread == nil || a.Status == StatusResolved {
		return nil
	}
	matchers := silenceMatchers(a)
	actions := rt.buttons
	if len(matchers) == 0 {
		actions = nil
		for _, act := range rt.buttons {
			if buttons.SilenceFor(act) == 0 {
				actions = append(actions, act)
			}
		}
	}
	if len(actions) == 0 {
		return nil
	}
	subj := buttons.Subject{
		Bot:       m.Bot,
		Chat:      m.Chat,
		ThreadKey: m.Thread.Key,
		Text:      m.Text,
		ParseMode: m.ParseMode,
		Alert:     markup.TruncateRunes(a.Title, subjectAlertLen),
		Fired:     a.Time,
		Matchers:  matchers,
		Allowed:   rt.allowed,
		Actions:   actions,
	}
	if am := rt.alertmanager; am != nil && a.Source == alertmanagerSource && slices.Contains(actions, buttons.Ack) {
		subj.Alertmanager, subj.AlertmanagerSilence = am.url, am.silence
	}
	kb, err := buttons.Keyboard(ctx, r.cfg.Redis, subj, jobs.ThreadRetention)
	if err != nil {
		return fmt.Errorf("%w: alerts: store what the buttons of route %q act on: %w", jobs.ErrUnavailable, rt.name, err)
	}
	m.Buttons = kb
	// Indexed by the alert, for an acknowledgement from its source.
	idx := keys.Bot(m.Bot).AlertButtons(a.Identity())
	if _, err := r.cfg.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.SAdd(ctx, idx, m.Chat+"\n"+buttons.RefOf(kb))
		p.PExpire(ctx, idx, jobs.ThreadRetention)
		return nil
	}); err != nil {
		return fmt.Errorf("%w: alerts: index the buttons of route %q: %w", jobs.ErrUnavailable, rt.name, err)
	}
	return nil
}

// subjectAlertLen bounds the alert's name kept with its buttons' subject.
const subjectAlertLen = 200

// Bounds of a silence's matchers (package silences: MaxMatchers,
// MaxMatcherNameLen, MaxMatcherValue); a silence button must create a
// silence the store accepts.
const (
	maxSilenceMatchers  = 32
	maxSilenceNameLen   = 256
	maxSilenceValueLen  = MaxLabelLen
	silenceLabelPrefix  = "labels."
	silenceSourceName   = "source"
	silenceSeverityName = "severity"
)

// silenceMatchers are the conditions of the silence a button creates:
// the alert's source and every label it has (alertname first, the others
// by name), which is what identifies an Alertmanager alert (its
// fingerprint is a hash of its labels). Labels named source or severity,
// or starting with "labels.", are written "labels.<name>" so that they
// name the label. Labels a silence could not hold are left out, as are
// those beyond its 32 matchers. An alert without labels gets none: a
// silence of its source alone would mute every alert of that source.
func silenceMatchers(a *Alert) []buttons.Matcher {
	names := make([]string, 0, len(a.Labels))
	for k := range a.Labels {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == "alertname") != (names[j] == "alertname") {
			return names[i] == "alertname"
		}
		return names[i] < names[j]
	})
	var ms []buttons.Matcher
	if a.Source != "" {
		ms = append(ms, buttons.Matcher{Name: silenceSourceName, Value: a.Source})
	}
	labels := 0
	for _, k := range names {
		if len(ms) == maxSilenceMatchers {
			break
		}
		name, v := k, a.Labels[k]
		if name == silenceSourceName || name == silenceSeverityName || strings.HasPrefix(name, silenceLabelPrefix) {
			name = silenceLabelPrefix + name
		}
		if v == "" || len(name) > maxSilenceNameLen || len(v) > maxSilenceValueLen {
			continue
		}
		ms = append(ms, buttons.Matcher{Name: name, Value: v})
		labels++
	}
	if labels == 0 {
		return nil
	}
	return ms
}

// resolvedItemPrefix starts the digest line of a resolved alert, so that
// a digest says which of its alerts resolved.
const resolvedItemPrefix = "✅ Resolved: "

// digestItem is a's line in a digest: its title (after "✅ Resolved: "
// when it has resolved), linked to its URL, with its body as summary.
func digestItem(a *Alert) jobs.DigestItem {
	title := a.Title
	if a.Status == StatusResolved {
		title = resolvedItemPrefix + title
		if markup.UTF16Len(title) > jobs.MaxItemTitleLen {
			rs := []rune(title)
			for markup.UTF16Len(string(rs)) > jobs.MaxItemTitleLen-1 {
				rs = rs[:len(rs)-1]
			}
			title = string(rs) + "…"
		}
	}
	return jobs.DigestItem{Title: title, URL: a.URL, Summary: a.Body}
}

// hasButtons reports whether a route of t gives its alerts buttons.
func (t *Table) hasButtons() bool {
	for _, rt := range t.routes {
		if len(rt.buttons) > 0 {
			return true
		}
	}
	return t.fallback != nil && len(t.fallback.buttons) > 0
}

// warnButtonsIgnored logs, once per table, that t's buttons cannot be
// shown because the Router has no Redis client.
func (r *Router) warnButtonsIgnored(t *Table) {
	if r.cfg.Redis == nil && t.hasButtons() {
		r.cfg.Logger.Warn("the routing file sets buttons but this router has no Redis client for them: alerts are sent without buttons (and without threads)",
			"file", t.Source())
	}
}
