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

// Spec is a Setting bound to a field of a configuration struct.
type Spec struct {
	Setting
	Binding
	Alias  string              // optional second flag name
	Secret bool                // never rendered
	Show   func(string) string // optional masking for rendering
}

// NewSpec builds a spec; the flag name is derived from env.
func NewSpec(env, def, help string, b Binding) Spec {
	return Spec{Setting: Setting{Env: env, Flag: FlagName(env), Default: def, Help: help}, Binding: b}
}

// SecretSpec builds a spec whose value is never shown.
func SecretSpec(env, help string, b Binding) Spec {
	s := NewSpec(env, "", help, b)
	s.Secret = true
	return s
}

// shown renders the current value for logs, masking secrets.
func (s Spec) shown() string {
	v := s.Get()
	switch {
	case s.Secret && v != "":
		return RedactedValue
	case s.Show != nil:
		return s.Show(v)
	}
	return v
}

// Retired is a setting that is no longer read. Setting it, in the
// environment or as a flag, is an error that says why and what to do.
type Retired struct {
	Env string
	Why string // follows "is no longer read: "
}

// Describe strips the bindings off specs.
func Describe(specs []Spec) []Setting {
	out := make([]Setting, len(specs))
	for i, s := range specs {
		out[i] = s.Setting
	}
	return out
}

// Load applies environment values and then flags to the fields bound by
// specs, and returns the arguments left after the flags. Problems with
// environment values that a flag overrides are dropped. A retired setting
// that is set is an error. -h and -help return flag.ErrHelp.
func Load(name string, specs []Spec, args []string, getenv func(string) string, gone ...Retired) ([]string, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	envErrs := make([]error, len(specs))
	for i, s := range specs {
		v := strings.TrimSpace(getenv(s.Env))
		if v == "" {
			continue
		}
		if err := s.Set(v); err != nil {
			if s.Secret {
				envErrs[i] = FieldErr(s.Env, "%v", err)
			} else {
				envErrs[i] = FieldErr(s.Env, "%v, got %q", err, v)
			}
		}
	}

	var goneErrs []error
	for _, r := range gone {
		if strings.TrimSpace(getenv(r.Env)) != "" {
			goneErrs = append(goneErrs, FieldErr(r.Env, "is no longer read: %s", r.Why))
		}
	}

	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for _, r := range gone {
		fs.Func(FlagName(r.Env), "", func(string) error {
			return fmt.Errorf("is no longer read (env %s): %s", r.Env, r.Why)
		})
	}
	owner := map[string]int{}
	for i, s := range specs {
		set := func(v string) error {
			if err := s.Set(strings.TrimSpace(v)); err != nil {
				return fmt.Errorf("%w (env %s)", err, s.Env)
			}
			return nil
		}
		for _, n := range []string{s.Flag, s.Alias} {
			if n == "" {
				continue
			}
			owner[n] = i
			usage := s.Help
			if n == s.Alias {
				usage = "Same as -" + s.Flag + "."
			}
			if s.Boolean {
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

// LogAttrs renders every setting as an attribute keyed by its environment
// variable, with secrets masked.
func LogAttrs(specs []Spec) []slog.Attr {
	attrs := make([]slog.Attr, len(specs))
	for i, s := range specs {
		attrs[i] = slog.String(s.Env, s.shown())
	}
	return attrs
}

// Render joins every setting as ENV=value with secrets masked.
func Render(specs []Spec) string {
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
// Environment, Flag, Default and Description, for docs/CONFIGURATION.md.
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
