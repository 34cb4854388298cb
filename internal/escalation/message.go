package escalation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/markup"
)

// maxTitle bounds the alert's title in a notification.
const maxTitle = 512

// notice is the notification of a step to a chat or, dm set, a user: the
// alert, how long it has fired, the step, and where to acknowledge it:
// with the buttons kb when there are some (a direct message), else under
// the alert's message.
func (t *take) notice(ctx context.Context, chat string, topic int, dm bool, kb *jobs.Keyboard) jobs.SendMessage {
	var b strings.Builder
	if dm {
		b.WriteString("🚨 Escalated to you: ")
	} else {
		b.WriteString("🚨 Escalated: ")
	}
	b.WriteString(markup.TruncateRunes(t.r.Alert.Title, maxTitle))
	fmt.Fprintf(&b, "\n%s · firing for %s · %s", severityOf(t.r.Alert), span(t.elapsed()), stepName(t.pol, t.r.Pos))
	if t.r.Alert.URL != "" {
		b.WriteString("\n" + t.r.Alert.URL)
	}
	link := t.link(ctx)
	switch {
	case kb != nil && link != "":
		b.WriteString("\nAcknowledge it with the button below, or under the alert: " + link)
	case kb != nil:
		b.WriteString("\nAcknowledge it with the button below.")
	case link != "":
		b.WriteString("\nAcknowledge it under the alert: " + link)
	default:
		b.WriteString("\nAcknowledge it with the button under the alert's message.")
	}
	return jobs.SendMessage{Bot: t.r.Bot, Chat: chat, MessageThreadID: topic, Text: b.String(), Buttons: kb}
}

// direct is the notification of a step to a user by direct message, with
// the buttons of the alert's message: a press there acknowledges (or
// silences) the alert as one under its message does.
func (t *take) direct(ctx context.Context, user int64) (jobs.SendMessage, error) {
	kb, err := t.buttons(ctx, user)
	if err != nil {
		return jobs.SendMessage{}, err
	}
	return t.notice(ctx, strconv.FormatInt(user, 10), 0, true, kb), nil
}

// buttons are the buttons of the first of the alert's messages that has
// some, for a direct message to user, who may press them there from now
// on (buttons.AllowDirect); nil when none has buttons, or what they act
// on is no longer stored.
func (t *take) buttons(ctx context.Context, user int64) (*jobs.Keyboard, error) {
	for _, h := range t.r.Homes {
		if h.Ref == "" {
			continue
		}
		subj, err := buttons.Load(ctx, t.e.cfg.Redis, t.r.Bot, h.Ref)
		switch {
		case errors.Is(err, buttons.ErrUnknown):
			continue
		case err != nil:
			return nil, err
		}
		kb := buttons.Buttons(subj, h.Ref)
		if kb == nil {
			continue
		}
		if err := buttons.AllowDirect(ctx, t.e.cfg.Redis, t.r.Bot, h.Ref, user, Retention); err != nil {
			return nil, err
		}
		return kb, nil
	}
	return nil, nil
}

// link is a t.me link to the alert's first message, when its chat has one
// (a supergroup, or a chat with an @username) and the message is sent.
func (t *take) link(ctx context.Context) string {
	for _, h := range t.r.Homes {
		v, err := t.e.cfg.Redis.Get(ctx, keys.Bot(t.r.Bot).Thread(h.Chat, h.Thread)).Result()
		if err != nil {
			if !errors.Is(err, redis.Nil) {
				t.log.Debug("the alert's message could not be looked up for its link", "error", err)
			}
			continue
		}
		id, _, ok := strings.Cut(v, ":")
		if !ok {
			continue
		}
		if name, at := strings.CutPrefix(h.Chat, "@"); at {
			return "https://t.me/" + name + "/" + id
		}
		if internal, super := strings.CutPrefix(h.Chat, "-100"); super {
			return "https://t.me/c/" + internal + "/" + id
		}
	}
	return ""
}

// send enqueues m, on the critical queue for a critical alert.
func (t *take) send(ctx context.Context, m jobs.SendMessage) (jobs.Result, error) {
	req := jobs.Request{Message: m}
	if t.r.Alert.critical() {
		req.Queue = jobs.QueueCritical
	}
	return t.e.cfg.Messages.Enqueue(ctx, req)
}

// DMFloodWindow is how long after a policy's last step DM to a person
// its next one still counts as part of the same run (sendDM).
const DMFloodWindow = time.Minute

// sendDM enqueues m, a step's direct message to a person. Telegram sends
// one message a second to a chat, and Herald gives a chat's messages
// their turns first come, first served, except that a message of a
// priority queue (the critical queue) takes the turn of the first one
// waiting from another queue. So a policy's first DM to the person in a
// while (none within Config.DMWindow) goes on the critical queue, whatever
// the alert's severity: however many DMs another policy's flood has
// queued for the same person, it is next. Its further DMs to the person
// within the window go on the default queue, in their order, behind
// it: one flood waits for its own DMs, not another policy's.
func (t *take) sendDM(ctx context.Context, m jobs.SendMessage) (jobs.Result, error) {
	k := keys.EscalationDMs(t.r.Bot, m.Chat, t.r.Policy)
	var n *redis.IntCmd
	if _, err := t.e.cfg.Redis.TxPipelined(ctx, func(p redis.Pipeliner) error {
		n = p.Incr(ctx, k)
		p.PExpire(ctx, k, t.e.cfg.DMWindow)
		return nil
	}); err != nil {
		return jobs.Result{}, fmt.Errorf("escalation: count the policy's DMs to %s: %w", m.Chat, err)
	}
	req := jobs.Request{Message: m, Queue: jobs.QueueDefault}
	if n.Val() == 1 {
		req.Queue = jobs.QueueCritical
	}
	return t.e.cfg.Messages.Enqueue(ctx, req)
}

// note replies text to the alert's message in each of its homes, without
// a notification sound (the chat knows about the alert). what names the
// note among the step's messages.
func (t *take) note(ctx context.Context, pos position, what, text string) error {
	for i, h := range t.r.Homes {
		m := jobs.SendMessage{Bot: t.r.Bot, Chat: h.Chat, MessageThreadID: h.Topic, Text: text, DisableNotification: true,
			IdempotencyKey: t.key(pos, what+"/"+strconv.Itoa(i))}
		if h.Thread != "" {
			m.Thread = &jobs.Thread{Key: h.Thread, Mode: jobs.ThreadReply}
		}
		_, err := t.send(ctx, m)
		var verr *jobs.ValidationError
		switch {
		case errors.As(err, &verr):
			t.log.Error("a note in the alert's thread was refused", "chat", h.Chat, "error", err)
		case err != nil:
			return err
		}
	}
	return nil
}

// stepName says which step pos is: "step 2 of 3", with the round when
// the steps repeat, or "re-notification 2".
func stepName(p Policy, pos position) string {
	if pos.Step >= len(p.Steps) {
		return "re-notification " + strconv.Itoa(pos.Renotify)
	}
	s := fmt.Sprintf("step %d of %d", pos.Step+1, len(p.Steps))
	if p.Repeat > 0 {
		s += fmt.Sprintf(", round %d of %d", pos.Round+1, p.Repeat+1)
	}
	return s
}

// stepNote is the thread's note of a step: whom it escalated to, and whom
// it found nobody for.
func stepNote(p Policy, pos position, firing time.Duration, reached, missed []string) string {
	var b strings.Builder
	if pos.Step >= len(p.Steps) {
		fmt.Fprintf(&b, "🔁 Still unacknowledged after %s: ", span(firing))
	} else {
		b.WriteString("↗️ ")
	}
	if len(reached) > 0 {
		b.WriteString("escalated to " + strings.Join(reached, ", "))
	} else {
		b.WriteString("nobody to escalate to")
	}
	b.WriteString(", " + stepName(p, pos))
	if len(missed) > 0 {
		b.WriteString("\n⚠️ Not notified: " + strings.Join(missed, ", "))
	}
	if len(reached) == 0 && pos.Step < len(p.Steps)-1 {
		b.WriteString("\n⏭ The next step follows now.")
	}
	return b.String()
}

// failureNote lists the step's messages that failed.
func failureNote(failures []string, allFailed bool) string {
	s := "⚠️ Could not reach " + strings.Join(failures, "; ")
	if allFailed {
		s += "\n⏭ Nobody was reached at this step: the next one follows now."
	}
	return s
}

// endNote is the thread's note when the steps are done unacknowledged.
func endNote(p Policy, firing time.Duration) string {
	return fmt.Sprintf("⏹ Escalation ended: nobody acknowledged after %d steps (%s firing).", len(p.Steps)*(p.Repeat+1), span(firing))
}

// explain turns a failed message's reason into words; dm is set for a
// direct message to a person, whose chat the worker marks blocked
// (chat_blocked) when they block the bot.
func explain(reason string, dm bool) string {
	if dm && (reason == "chat_blocked" || reason == "kicked") {
		reason = "blocked"
	}
	switch reason {
	case "blocked":
		return "they blocked the bot (or deleted their account)"
	case "forbidden":
		return "the bot may not message them: they have not started a chat with it (Telegram answered 403)"
	case "chat_not_found":
		return "Telegram does not know the chat (chat not found)"
	case "chat_blocked", "kicked":
		return "the bot is no longer a member of the chat"
	case "":
		return "the message failed"
	}
	return "the message failed (" + reason + ")"
}

// severityOf names the alert's severity for a notification.
func severityOf(s Subject) string {
	if s.Severity == "" {
		return "info"
	}
	return s.Severity
}

// span renders a duration for people: 45s, 2m, 1h5m.
func span(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	if m == 0 {
		return strconv.Itoa(h) + "h"
	}
	return fmt.Sprintf("%dh%dm", h, m)
}

// digest is a short stable name of s, for idempotency keys.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
