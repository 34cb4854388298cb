package worker

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/telegram"
)

// actionKind is what the worker does after a step of a task failed.
type actionKind int

const (
	actRetry     actionKind = iota // back off, then try again; counts against the retry budget
	actArchive                     // give up: archive the task with its reason
	actPause                       // 429: pause the chat and the bot in the limiter, then wait for the next turn
	actSnooze                      // 429 again and again: hand the task back until the pause is over
	actDowngrade                   // Telegram could not parse the markup: send the rest as plain text
	actShrink                      // Telegram counted the part as too long: split the rest shorter
	actFollow                      // the group became a supergroup: send there
	actBlock                       // the chat blocked or removed the bot: mark it, fail the message
	actStopPaid                    // Telegram refused a paid broadcast: turn paid broadcasts off, send at the free limit
)

// action is decide's answer.
type action struct {
	kind   actionKind
	reason string        // why, for logs, metrics and the archived task's error
	err    error         // the cause
	wait   time.Duration // actPause, actSnooze: how long Telegram asked for
	limit  int           // actShrink: the new longest part
	to     string        // actFollow: the supergroup's id
	// maybeSent says the message may have reached Telegram although no
	// answer came back (a timeout): a retry may deliver it twice.
	maybeSent bool
}

// situation is what decide needs to know about the attempt besides the
// error.
type situation struct {
	attempt, budget int // failed attempts so far; failed attempts allowed after the first
	// The part that Telegram refused: its text, markup mode and the length
	// limit it was split with.
	text  string
	mode  markup.Mode
	limit int
	// migrations and pauses count the migrations followed and the 429s met
	// in this attempt, paidRefusals the paid broadcasts Telegram refused.
	migrations, pauses, paidRefusals int
	// retryAfterUnit is how long one second of retry_after lasts.
	retryAfterUnit time.Duration
}

// storeError marks a failure of Redis (Herald's state), retried like a
// temporary Telegram error.
type storeError struct{ err error }

func (e storeError) Error() string { return e.err.Error() }
func (e storeError) Unwrap() error { return e.err }

// decide maps a failed step to what comes next. It is pure: every effect
// (Redis, metrics, logs) is the caller's.
func decide(err error, s situation) action {
	var se storeError
	if errors.As(err, &se) {
		return s.retry("redis", err)
	}
	tg, ok := telegram.AsError(err)
	if !ok {
		return s.retry("unknown", err)
	}
	reason := string(tg.Reason)
	switch tg.Reason {
	case telegram.ReasonRateLimited:
		// retry_after counts whole seconds; a tenth of one more covers its
		// rounding and the trip back to Telegram.
		secs := max(int64(tg.RetryAfter/time.Second), 1)
		wait := time.Duration(secs)*s.retryAfterUnit + s.retryAfterUnit/10
		if s.pauses >= 2 {
			// Telegram keeps refusing: wait it out away from the worker.
			return action{kind: actSnooze, reason: "telegram 429", err: tg, wait: wait}
		}
		return action{kind: actPause, reason: reason, err: tg, wait: wait}
	case telegram.ReasonParseEntities:
		if s.mode == markup.None {
			return action{kind: actArchive, reason: "parse_entities", err: tg}
		}
		return action{kind: actDowngrade, reason: reason, err: tg}
	case telegram.ReasonTooLong:
		// Telegram counts differently from Herald (markup, entities, a
		// server of its own): split the rest smaller, never archive
		// readable text for it.
		if next, ok := shorterLimit(s.limit, s.text, s.mode); ok {
			return action{kind: actShrink, reason: reason, err: tg, limit: next}
		}
		return action{kind: actArchive, reason: reason, err: tg}
	case telegram.ReasonPaidRefused:
		if s.paidRefusals >= maxPaidRefusals {
			// Paid broadcasts were turned off and Telegram still refuses:
			// whatever it is, back off.
			return s.retry(reason, tg)
		}
		return action{kind: actStopPaid, reason: paidReason(tg.Description), err: tg}
	case telegram.ReasonMigrated:
		if tg.MigrateTo == 0 || s.migrations >= 2 {
			return action{kind: actArchive, reason: "chat_migrated", err: tg}
		}
		return action{kind: actFollow, reason: reason, err: tg, to: strconv.FormatInt(tg.MigrateTo, 10)}
	}
	if gone, _ := tg.ChatGone(); gone {
		return action{kind: actBlock, reason: ledger.ReasonChatBlocked, err: tg}
	}
	if !tg.Temporary() {
		return action{kind: actArchive, reason: reason, err: tg}
	}
	a := s.retry(reason, tg)
	a.maybeSent = tg.Reason == telegram.ReasonTimeout
	return a
}

// maxPaidRefusals is how many refusals of a paid broadcast one attempt
// meets before it backs off: after the first, paid broadcasts are off and
// the next send carries no flag.
const maxPaidRefusals = 2

// retry backs off, or archives the task when its budget is spent.
func (s situation) retry(reason string, err error) action {
	if s.attempt >= s.budget {
		return action{kind: actArchive, reason: "retries_exhausted",
			err: fmt.Errorf("%d attempts failed, the last with %s: %w", s.attempt+1, reason, err)}
	}
	return action{kind: actRetry, reason: reason, err: err}
}

// shown is an error as the archived task shows it: Telegram's own words and
// code when there are some.
func shown(err error) error {
	tg, ok := err.(*telegram.Error)
	if !ok || tg.Description == "" {
		return err
	}
	if tg.Code != 0 {
		return fmt.Errorf("%s (Telegram error %d)", tg.Description, tg.Code)
	}
	return errors.New(tg.Description)
}
