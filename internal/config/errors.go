package config

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// FieldError is a problem with one setting. Its message names the environment
// variable and the flag that control the setting, followed by what is wrong
// and how to fix it.
type FieldError struct {
	Env  string // environment variable, e.g. "HERALD_CONCURRENCY"
	Flag string // flag name without the leading dash, e.g. "concurrency"
	Msg  string // what is wrong and the fix
}

// Error renders the problem as `ENV (-flag) message`, or `ENV message` for
// a setting without a flag (a bot's token variables).
func (e *FieldError) Error() string {
	if e.Flag == "" {
		return e.Env + " " + e.Msg
	}
	return e.Env + " (-" + e.Flag + ") " + e.Msg
}

// FieldErr builds a FieldError for env with a formatted message.
func FieldErr(env, format string, args ...any) *FieldError {
	return &FieldError{Env: env, Flag: FlagName(env), Msg: fmt.Sprintf(format, args...)}
}

// Ref renders another setting as `ENV (-flag)` for use inside a message,
// or as ENV alone when it has no flag.
func Ref(env string) string {
	if f := FlagName(env); f != "" {
		return env + " (-" + f + ")"
	}
	return env
}

// FlagName derives the flag name from an environment variable name: the
// HERALD_ prefix is dropped, the rest is lower-cased and underscores become
// dashes. A bot's token variables have no flag: "".
func FlagName(env string) string {
	if envOnly(env) {
		return ""
	}
	s := strings.TrimPrefix(env, "HERALD_")
	return strings.ReplaceAll(strings.ToLower(s), "_", "-")
}

// Problems collects validation failures so that all of them are reported.
type Problems []error

// Add records a problem with the setting named by env.
func (p *Problems) Add(env, format string, args ...any) {
	*p = append(*p, FieldErr(env, format, args...))
}

// Err joins the collected problems, or returns nil when there are none.
func (p Problems) Err() error {
	return errors.Join(p...)
}

// Positive records a problem when d is not above zero. The example is the
// setting's default, passed in by the caller from the component that owns
// it, so the message cannot suggest a stale figure.
func (p *Problems) Positive(env string, d, example time.Duration) {
	if d <= 0 {
		p.Add(env, "must be > 0 (e.g. %s), got %s", FmtDur(example), FmtDur(d))
	}
}

// AtLeastSecond records a problem when d is below one second; example is
// the setting's default, as for positive.
func (p *Problems) AtLeastSecond(env string, d, example time.Duration) {
	if d < time.Second {
		p.Add(env, "must be at least 1s (e.g. %s), got %s", FmtDur(example), FmtDur(d))
	}
}

// envOnly reports whether env is one of the per-bot token variables
// (HERALD_BOT_<NAME>_TOKEN and HERALD_BOT_<NAME>_TOKEN_FILE). Their names
// depend on the bots a deployment lists, so they are read from the
// environment only and have no flag (which would show a token in the
// process list anyway).
func envOnly(env string) bool {
	return strings.HasPrefix(env, "HERALD_BOT_") && (strings.HasSuffix(env, "_TOKEN") || strings.HasSuffix(env, "_TOKEN_FILE"))
}
