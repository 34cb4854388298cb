package httpapi

import (
	"errors"

	"github.com/herald-dev/herald/internal/jobs"
)

// URLChecker checks a callback_url against the status callbacks' policy
// (statushook.Emitter.CheckURL).
type URLChecker interface{ CheckURL(string) error }

// reasoned is an error that says why apart from the field it names
// (statushook.URLError).
type reasoned interface{ FieldReason() string }

// CheckCallbackURL refuses a callback_url that the policy cb does not let
// through (loopback, private and link-local addresses unless allow-listed)
// with a 400 naming the field. A nil cb means callbacks are off: every
// callback_url is refused. An empty raw is no callback, always accepted.
func CheckCallbackURL(cb URLChecker, raw string) *Error {
	if raw == "" {
		return nil
	}
	var err error = errors.New("status callbacks are off: set HERALD_CALLBACK_SECRET")
	if cb != nil {
		err = cb.CheckURL(raw)
	}
	if err == nil {
		return nil
	}
	msg := err.Error()
	var r reasoned
	if errors.As(err, &r) {
		msg = r.FieldReason()
	}
	return Invalid("invalid message", jobs.FieldError{Field: "callback_url", Message: msg})
}
