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

// fieldErr builds a FieldError for env with a formatted message.
func fieldErr(env, format string, args ...any) *FieldError {
	return &FieldError{Env: env, Flag: flagName(env), Msg: fmt.Sprintf(format, args...)}
}

// ref renders another setting as `ENV (-flag)` for use inside a message,
// or as ENV alone when it has no flag.
func ref(env string) string {
	if f := flagName(env); f != "" {
		return env + " (-" + f + ")"
	}
	return env
}

// flagName derives the flag name from an environment variable name: the
// HERALD_ prefix is dropped, the rest is lower-cased and underscores become
// dashes. A bot's token variables have no flag: "".
func flagName(env string) string {
	if envOnly(env) {
		return ""
	}
	s := strings.TrimPrefix(env, "HERALD_")
	return strings.ReplaceAll(strings.ToLower(s), "_", "-")
}

// problems collects validation failures so that all of them are reported.
type problems []error

// add records a problem with the setting named by env.
func (p *problems) add(env, format string, args ...any) {
	*p = append(*p, fieldErr(env, format, args...))
}

// err joins the collected problems, or returns nil when there are none.
func (p problems) err() error {
	return errors.Join(p...)
}

// positive records a problem when d is not above zero. The example is the
// setting's default, passed in by the caller from the component that owns
// it, so the message cannot suggest a stale figure.
func (p *problems) positive(env string, d, example time.Duration) {
	if d <= 0 {
		p.add(env, "must be > 0 (e.g. %s), got %s", fmtDur(example), fmtDur(d))
	}
}

// atLeastSecond records a problem when d is below one second; example is
// the setting's default, as for positive.
func (p *problems) atLeastSecond(env string, d, example time.Duration) {
	if d < time.Second {
		p.add(env, "must be at least 1s (e.g. %s), got %s", fmtDur(example), fmtDur(d))
	}
}

// bodyLimit records a problem when a body limit is below minBodyBytes;
// example is the setting's default, as for positive.
func (p *problems) bodyLimit(env string, n, example int64) {
	if n < minBodyBytes {
		p.add(env, "must be at least %s (e.g. %s), got %d", formatBytes(minBodyBytes), formatBytes(example), n)
	}
}
