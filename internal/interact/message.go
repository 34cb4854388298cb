package interact

import (
	"fmt"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/silences"
)

// What a user is told (answerCallbackQuery texts, at most 200 characters).
const (
	answerAcknowledged = "Acknowledged"
	answerUntracked    = "This alert is no longer tracked"
	answerRefused      = "You may not do this here"
	answerUnsureChat   = "Herald cannot confirm this is the alert's chat; nothing was done"
	answerNoSilences   = "Silences are not available here"
	answerTooMany      = "Too many silences are in force; this one was not created"
)

// clock renders t as "14:02 UTC", with the date when it is not on the same
// UTC day as now ("Jan 2 14:02 UTC").
func clock(t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	if t.YearDay() == now.YearDay() && t.Year() == now.Year() {
		return t.Format("15:04") + " UTC"
	}
	return t.Format("Jan 2 15:04") + " UTC"
}

// span renders a silence's length: "1h", "24h", else Go's form.
func span(d time.Duration) string {
	if d > 0 && d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

// ackLine is the line an acknowledgement adds below the message: who,
// when and, when the alert's firing time is known, how long after it.
func ackLine(by string, at, now, fired time.Time) string {
	s := "✅ Acknowledged by " + by + " at " + clock(at, now)
	if !fired.IsZero() && !at.Before(fired) {
		s += ", " + after(at.Sub(fired)) + " after firing"
	}
	return s
}

// after renders how long after firing: "40s", "12m", "1h 5m", "2d 3h".
func after(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", d/time.Second)
	case d < time.Hour:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %dm", d/time.Hour, d%time.Hour/time.Minute)
	}
	return fmt.Sprintf("%dd %dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}

// silenceLine is the line a silence adds below the message.
func silenceLine(by string, d time.Duration, until, now time.Time) string {
	return "🔕 Silenced for " + span(d) + " by " + by + " (until " + clock(until, now) + ")"
}

// editText is the subject's text with lines below it, in parseMode (the
// mode of the text as sent), within limit visible characters: the text
// is cut (at a paragraph, line or word where it can) to leave room for
// the lines, so that the edit stays one message. The lines are plain text,
// escaped here. A text whose markup does not parse is shown as plain text,
// and the mode returned says so.
func editText(text, parseMode string, lines []string, limit int) (string, string) {
	mode, err := markup.ParseMode(parseMode)
	if err != nil {
		mode = markup.None
	}
	tail := strings.Join(lines, "\n")
	budget := limit - markup.UTF16Len(tail) - 2 // the blank line between
	body := ""
	if strings.TrimSpace(text) != "" && budget > 1 {
		parts, err := markup.Split(text, mode, budget-1) // room for "…"
		if err != nil {
			// Split cut it as plain text.
			mode = markup.None
		}
		if len(parts) > 0 {
			body = parts[0]
			if len(parts) > 1 {
				body += "…"
			}
		}
	}
	tail = markup.Escape(tail, mode)
	if strings.TrimSpace(body) == "" {
		return tail, string(mode)
	}
	return strings.TrimRight(body, "\n") + "\n\n" + tail, string(mode)
}

// remainingButtons are the subject's buttons that still make sense, with
// the data of ref: all but Acknowledge once the thread is acknowledged.
func remainingButtons(s buttons.Subject, ref string, acknowledged bool) *jobs.Keyboard {
	var row []jobs.Button
	for _, a := range s.Actions {
		if a == buttons.Ack && acknowledged {
			continue
		}
		row = append(row, jobs.Button{Text: buttons.Label(a), Data: buttons.Data(a, ref)})
	}
	if len(row) == 0 {
		return nil
	}
	return &jobs.Keyboard{row}
}

// silenceComment is the comment of a silence a press creates. It names the
// alert and the press: a retried press finds the silence it created by it.
func silenceComment(alert string, d time.Duration, queryID string) string {
	if alert == "" {
		alert = "an alert"
	}
	suffix := " (Telegram press " + queryID + ")"
	head := "Silenced for " + span(d) + " from Telegram: "
	room := silences.MaxCommentLen - len([]rune(head)) - len([]rune(suffix))
	if r := []rune(alert); len(r) > room {
		alert = string(r[:max(room-1, 0)]) + "…"
	}
	return head + alert + suffix
}
