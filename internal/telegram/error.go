package telegram

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Error describes a failed Bot API call. Send and ChatID return it for every
// failure except a context that was already done before the call started.
// None of its fields or formatted forms contain the bot token.
type Error struct {
	// Reason is the outcome class the worker's retry policy keys on.
	Reason Reason
	// Code is Telegram's error_code, or the HTTP status when the body was
	// not Telegram JSON; 0 for transport failures and local validation.
	Code int
	// Description is Telegram's description or the transport error text,
	// with the token replaced by "<redacted>".
	Description string
	// RetryAfter is how long Telegram asks to wait (parameters.retry_after).
	RetryAfter time.Duration
	// MigrateTo is the supergroup id a migrated group moved to
	// (parameters.migrate_to_chat_id).
	MigrateTo int64
	// Ambiguous is true when the request may have reached Telegram, so a
	// retry can deliver the message twice.
	Ambiguous bool

	// causes are token-free underlying errors exposed through Unwrap, so
	// errors.Is(err, context.Canceled) and similar checks work.
	causes []error
}

// Error renders the failure as "telegram: <code> <reason>: <description>",
// leaving out the code when there is none.
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString("telegram: ")
	if e.Code != 0 {
		b.WriteString(strconv.Itoa(e.Code))
		b.WriteByte(' ')
	}
	b.WriteString(string(e.Reason))
	if e.Ambiguous {
		b.WriteString(" (may have been delivered)")
	}
	if e.Description != "" {
		b.WriteString(": ")
		b.WriteString(e.Description)
	}
	return b.String()
}

// Temporary reports whether retrying the same message later may succeed;
// see Reason.Temporary.
func (e *Error) Temporary() bool {
	return e != nil && e.Reason.Temporary()
}

// ChatGone reports whether the chat is closed to the bot until it comes
// back: the user blocked it or deleted the account (ReasonBlocked), or the
// bot was removed from the group or channel (kicked, not a member). kicked
// tells the two apart.
func (e *Error) ChatGone() (gone, kicked bool) {
	if e == nil {
		return false, false
	}
	return e.Reason == ReasonBlocked || e.Reason == reasonKicked, e.Reason == reasonKicked
}

// Unwrap exposes the token-free causes of a transport failure, such as
// context.Canceled or the network error behind a refused connection.
func (e *Error) Unwrap() []error {
	if e == nil {
		return nil
	}
	return e.causes
}

// Format implements fmt.Formatter so that every verb, including %+v and
// %#v, prints only the exported, already redacted fields.
func (e *Error) Format(s fmt.State, verb rune) {
	switch {
	case verb == 'v' && s.Flag('#'):
		writeString(s, e.GoString())
	case verb == 'v' && s.Flag('+'):
		writeString(s, e.detail())
	case verb == 'v', verb == 's':
		writeString(s, e.Error())
	case verb == 'q':
		writeString(s, strconv.Quote(e.Error()))
	default:
		_, _ = fmt.Fprintf(s, "%%!%c(*telegram.Error=%s)", verb, e.Error())
	}
}

// GoString renders the exported fields as a Go literal.
func (e *Error) GoString() string {
	if e == nil {
		return "(*telegram.Error)(nil)"
	}
	return fmt.Sprintf("&telegram.Error{Reason:%q, Code:%d, Description:%q, RetryAfter:%d, MigrateTo:%d, Ambiguous:%t}",
		string(e.Reason), e.Code, e.Description, int64(e.RetryAfter), e.MigrateTo, e.Ambiguous)
}

// detail is the %+v form: the message followed by every field.
func (e *Error) detail() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s [reason=%s code=%d retry_after=%s migrate_to=%d ambiguous=%t temporary=%t]",
		e.Error(), e.Reason, e.Code, e.RetryAfter, e.MigrateTo, e.Ambiguous, e.Temporary())
}

// AsError finds the first *Error in err's chain.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e, true
	}
	return nil, false
}
