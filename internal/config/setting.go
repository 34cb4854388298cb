package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Setting describes one configuration knob for documentation: the
// environment variable, the flag name (without the leading dash), the
// default as it would be written in the environment, and a short help text.
type Setting struct {
	Env, Flag, Default, Help string
}

// spec is a Setting bound to a field of a configuration struct.
type spec struct {
	Setting
	binding
	alias  string              // optional second flag name
	secret bool                // never rendered
	show   func(string) string // optional masking for rendering
}

// newSpec builds a spec; the flag name is derived from env.
func newSpec(env, def, help string, b binding) spec {
	return spec{Setting: Setting{Env: env, Flag: flagName(env), Default: def, Help: help}, binding: b}
}

// secretSpec builds a spec whose value is never shown.
func secretSpec(env, help string, b binding) spec {
	s := newSpec(env, "", help, b)
	s.secret = true
	return s
}

// shown renders the current value for logs, masking secrets.
func (s spec) shown() string {
	v := s.get()
	switch {
	case s.secret && v != "":
		return redactedValue
	case s.show != nil:
		return s.show(v)
	}
	return v
}

// retired is a setting that is no longer read. Setting it, in the
// environment or as a flag, is an error that says why and what to do.
type retired struct {
	env string
	why string // follows "is no longer read: "
}

// describe strips the bindings off specs.
func describe(specs []spec) []Setting {
	out := make([]Setting, len(specs))
	for i, s := range specs {
		out[i] = s.Setting
	}
	return out
}

// commonSpecs are the settings both binaries share.
func commonSpecs(r *Redis, l *Log, bots *[]string) []spec {
	return append(redisSpecs(r),
		newSpec(EnvLogLevel, "info", "Minimum log level: debug, info, warn or error.", levelVar(&l.Level)),
		newSpec(EnvLogFormat, LogFormatAuto, "Log format: json, text, or auto (text on a terminal, JSON otherwise).", formatVar(&l.Format)),
		newSpec(EnvBots, strings.Join(defaultBots, ","), botsHelp, botsVar(bots)),
	)
}

// load applies environment values and then flags to the fields bound by
// specs, and returns the arguments left after the flags. Problems with
// environment values that a flag overrides are dropped. A retired setting
// that is set is an error. -h and -help return flag.ErrHelp.
func load(name string, specs []spec, args []string, getenv func(string) string, gone ...retired) ([]string, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	envErrs := make([]error, len(specs))
	for i, s := range specs {
		v := strings.TrimSpace(getenv(s.Env))
		if v == "" {
			continue
		}
		if err := s.set(v); err != nil {
			if s.secret {
				envErrs[i] = fieldErr(s.Env, "%v", err)
			} else {
				envErrs[i] = fieldErr(s.Env, "%v, got %q", err, v)
			}
		}
	}

	var goneErrs []error
	for _, r := range gone {
		if strings.TrimSpace(getenv(r.env)) != "" {
			goneErrs = append(goneErrs, fieldErr(r.env, "is no longer read: %s", r.why))
		}
	}

	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for _, r := range gone {
		fs.Func(flagName(r.env), "", func(string) error {
			return fmt.Errorf("is no longer read (env %s): %s", r.env, r.why)
		})
	}
	owner := map[string]int{}
	for i, s := range specs {
		set := func(v string) error {
			if err := s.set(strings.TrimSpace(v)); err != nil {
				return fmt.Errorf("%w (env %s)", err, s.Env)
			}
			return nil
		}
		for _, n := range []string{s.Flag, s.alias} {
			if n == "" {
				continue
			}
			owner[n] = i
			usage := s.Help
			if n == s.alias {
				usage = "Same as -" + s.Flag + "."
			}
			if s.boolean {
				fs.BoolFunc(n, usage, set)
			} else {
				fs.Func(n, usage, set)
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, flag.ErrHelp
		}
		return nil, errors.Join(append(append([]error{err}, goneErrs...), envErrs...)...)
	}
	fs.Visit(func(f *flag.Flag) {
		if i, ok := owner[f.Name]; ok {
			envErrs[i] = nil
		}
	})
	if err := errors.Join(append(goneErrs, envErrs...)...); err != nil {
		return nil, err
	}
	return fs.Args(), nil
}

// logAttrs renders every setting as an attribute keyed by its environment
// variable, with secrets masked.
func logAttrs(specs []spec) []slog.Attr {
	attrs := make([]slog.Attr, len(specs))
	for i, s := range specs {
		attrs[i] = slog.String(s.Env, s.shown())
	}
	return attrs
}

// render joins every setting as ENV=value with secrets masked.
func render(specs []spec) string {
	parts := make([]string, len(specs))
	for i, s := range specs {
		parts[i] = s.Env + "=" + s.shown()
	}
	return strings.Join(parts, " ")
}

// Usage writes a help text listing every setting, its flag, environment
// variable and default, in the style of the flag package.
func Usage(w io.Writer, settings []Setting) error {
	var b strings.Builder
	for _, s := range settings {
		fmt.Fprintf(&b, "  -%s value\n    \t%s\n    \t(env %s", s.Flag, s.Help, s.Env)
		if s.Default != "" {
			fmt.Fprintf(&b, ", default %q", s.Default)
		}
		b.WriteString(")\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// MarkdownTable renders settings as a Markdown table with the columns
// Environment, Flag, Default and Description, for the README.
func MarkdownTable(settings []Setting) string {
	var b strings.Builder
	b.WriteString("| Environment | Flag | Default | Description |\n")
	b.WriteString("|---|---|---|---|\n")
	// A pipe would end the cell; a "<" could start an HTML tag, which
	// GitHub drops with what follows it (HERALD_BOT_<NAME>_TOKEN).
	cell := strings.NewReplacer("|", `\|`, "<", "&lt;").Replace
	for _, s := range settings {
		def := ""
		if s.Default != "" {
			def = "`" + cell(s.Default) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | `-%s` | %s | %s |\n", s.Env, s.Flag, def, cell(s.Help))
	}
	return b.String()
}
