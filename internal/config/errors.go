package config

import (
	"errors"
	"fmt"
	"strings"
)

// FieldError is a problem with one setting. Its message names the environment
// variable and the flag that control the setting, followed by what is wrong
// and how to fix it.
type FieldError struct {
	Env  string // environment variable, e.g. "HERALD_CONCURRENCY"
	Flag string // flag name without the leading dash, e.g. "concurrency"
	Msg  string // what is wrong and the fix
}

// Error renders the problem as `ENV (-flag) message`.
func (e *FieldError) Error() string {
	return e.Env + " (-" + e.Flag + ") " + e.Msg
}

// fieldErr builds a FieldError for env with a formatted message.
func fieldErr(env, format string, args ...any) *FieldError {
	return &FieldError{Env: env, Flag: flagName(env), Msg: fmt.Sprintf(format, args...)}
}

// ref renders another setting as `ENV (-flag)` for use inside a message.
func ref(env string) string {
	return env + " (-" + flagName(env) + ")"
}

// flagName derives the flag name from an environment variable name: the
// HERALD_ prefix is dropped, the rest is lower-cased and underscores become
// dashes.
func flagName(env string) string {
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
