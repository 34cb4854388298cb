package worker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/telegram"
)

func TestDecide(t *testing.T) {
	tg := func(r telegram.Reason, f ...func(*telegram.Error)) error {
		e := &telegram.Error{Reason: r, Code: 400, Description: string(r)}
		for _, fn := range f {
			fn(e)
		}
		return e
	}
	retryAfter := func(d time.Duration) func(*telegram.Error) { return func(e *telegram.Error) { e.RetryAfter = d } }
	migrate := func(id int64) func(*telegram.Error) { return func(e *telegram.Error) { e.MigrateTo = id } }
	long := strings.Repeat("x", markup.MaxMessageLen)
	fresh := situation{attempt: 0, budget: 25, text: long, mode: markup.HTML, limit: markup.MaxMessageLen, retryAfterUnit: time.Second}
	with := func(f func(*situation)) situation { s := fresh; f(&s); return s }

	cases := []struct {
		name   string
		err    error
		s      situation
		kind   actionKind
		reason string
		check  func(t *testing.T, a action)
	}{
		{"redis failure retries", storeError{errors.New("connection refused")}, fresh, actRetry, "redis", nil},
		{"unknown error retries", errors.New("boom"), fresh, actRetry, "unknown", nil},
		{"5xx retries", tg(telegram.ReasonServerError), fresh, actRetry, "server_error", nil},
		{"timeout retries and may have been sent", tg(telegram.ReasonTimeout), fresh, actRetry, "timeout",
			func(t *testing.T, a action) {
				if !a.maybeSent {
					t.Error("a timeout must be flagged as possibly sent")
				}
			}},
		{"spent budget archives", tg(telegram.ReasonServerError), with(func(s *situation) { s.attempt = 25 }), actArchive, "retries_exhausted",
			func(t *testing.T, a action) {
				if !strings.Contains(a.err.Error(), "26 attempts failed, the last with server_error") {
					t.Errorf("err = %v", a.err)
				}
			}},
		{"zero budget archives on the first failure", storeError{errors.New("down")}, with(func(s *situation) { s.budget = 0 }), actArchive, "retries_exhausted", nil},
		{"blocked marks the chat", tg(telegram.ReasonBlocked), fresh, actBlock, ledger.ReasonChatBlocked, nil},
		{"chat not found archives", tg(telegram.ReasonChatNotFound), fresh, actArchive, "chat_not_found", nil},
		{"unauthorized retries (a token being replaced)", tg(telegram.ReasonUnauthorized), fresh, actRetry, "unauthorized", nil},
		{"plain 400 archives, never retried", tg(telegram.ReasonBadRequest), fresh, actArchive, "bad_request", nil},
		{"429 pauses for retry_after plus a tenth", tg(telegram.ReasonRateLimited, retryAfter(3*time.Second)), fresh, actPause, "rate_limited",
			func(t *testing.T, a action) {
				if a.wait != 3100*time.Millisecond {
					t.Errorf("wait = %v, want 3.1s", a.wait)
				}
			}},
		{"429 without retry_after waits a second", tg(telegram.ReasonRateLimited), fresh, actPause, "rate_limited",
			func(t *testing.T, a action) {
				if a.wait != 1100*time.Millisecond {
					t.Errorf("wait = %v, want 1.1s", a.wait)
				}
			}},
		{"retry_after in a fake's faster seconds", tg(telegram.ReasonRateLimited, retryAfter(2*time.Second)),
			with(func(s *situation) { s.retryAfterUnit = 100 * time.Millisecond }), actPause, "rate_limited",
			func(t *testing.T, a action) {
				if a.wait != 210*time.Millisecond {
					t.Errorf("wait = %v, want 210ms", a.wait)
				}
			}},
		{"third 429 in one attempt snoozes", tg(telegram.ReasonRateLimited, retryAfter(5*time.Second)),
			with(func(s *situation) { s.pauses = 2 }), actSnooze, "telegram 429", nil},
		{"429 never touches the budget", tg(telegram.ReasonRateLimited), with(func(s *situation) { s.attempt = 99 }), actPause, "rate_limited", nil},
		{"bad markup downgrades", tg(telegram.ReasonParseEntities), fresh, actDowngrade, "parse_entities", nil},
		{"bad plain text archives", tg(telegram.ReasonParseEntities), with(func(s *situation) { s.mode = markup.None }), actArchive, "parse_entities", nil},
		{"too long shrinks", tg(telegram.ReasonTooLong), fresh, actShrink, "message_too_long",
			func(t *testing.T, a action) {
				if a.limit >= markup.MaxMessageLen || a.limit < minPartLen {
					t.Errorf("limit = %d", a.limit)
				}
			}},
		{"too long at the shortest split archives", tg(telegram.ReasonTooLong),
			with(func(s *situation) { s.limit, s.text = minPartLen, strings.Repeat("y", minPartLen) }), actArchive, "message_too_long", nil},
		{"migration is followed", tg(telegram.ReasonMigrated, migrate(-1001234)), fresh, actFollow, "chat_migrated",
			func(t *testing.T, a action) {
				if a.to != "-1001234" {
					t.Errorf("to = %q", a.to)
				}
			}},
		{"migration without a target archives", tg(telegram.ReasonMigrated), fresh, actArchive, "chat_migrated", nil},
		{"a third migration archives", tg(telegram.ReasonMigrated, migrate(-100)), with(func(s *situation) { s.migrations = 2 }), actArchive, "chat_migrated", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := decide(tc.err, tc.s)
			if a.kind != tc.kind || a.reason != tc.reason {
				t.Fatalf("decide = kind %d reason %q, want kind %d reason %q", a.kind, a.reason, tc.kind, tc.reason)
			}
			if a.err == nil {
				t.Fatal("the action lost its cause")
			}
			if tc.check != nil {
				tc.check(t, a)
			}
		})
	}
}

func TestShownKeepsTelegramsWords(t *testing.T) {
	err := &telegram.Error{Reason: telegram.ReasonChatNotFound, Code: 400, Description: "Bad Request: chat not found"}
	if got := shown(err).Error(); got != "Bad Request: chat not found (Telegram error 400)" {
		t.Errorf("shown = %q", got)
	}
	wrapped := errors.New("3 attempts failed")
	if shown(wrapped) != wrapped {
		t.Error("a non-Telegram error must pass through")
	}
}
