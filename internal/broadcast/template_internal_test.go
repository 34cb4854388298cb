package broadcast

import (
	"strings"
	"testing"
)

// adversarial are templates that made the former parser quadratic (it
// searched the whole rest for "}}" after every "{{" and copied the text
// so far on every step), or that could make a careless one so.
func adversarial(n int) map[string]string {
	return map[string]string{
		"open braces":              strings.Repeat("{{", n/2),
		"open braces, one close":   strings.Repeat("{{", n/2) + "}}",
		"spaced opens, one close":  strings.Repeat("{{ ", n/3) + "}}",
		"names without close":      strings.Repeat("{{ a ", n/5) + "}}",
		"placeholders":             strings.Repeat("{{a}}", n/5),
		"triple braces":            strings.Repeat("{{{", n/3) + "x}}}",
		"white space then a close": "{{" + strings.Repeat(" ", n) + "}}",
	}
}

// TestParseLinear: the parser examines each byte of a template at most
// about twice, whatever the template, so its work grows with the length
// and not with its square.
func TestParseLinear(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1 << 10, 128 << 10} {
		for name, s := range adversarial(n) {
			if _, steps := parse(s); steps > 3*len(s)+3 {
				t.Errorf("%s, %d bytes: %d steps, want at most %d", name, len(s), steps, 3*len(s)+3)
			}
		}
	}
}

// TestParseSegments: the one-pass parser splits as the syntax says;
// text segments are merged between placeholders.
func TestParseSegments(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]template{
		"":                        nil,
		"plain":                   {{text: "plain"}},
		"{{a}}":                   {{key: "a"}},
		"x{{ a_1 }}y{{b}}":        {{text: "x"}, {key: "a_1"}, {text: "y"}, {key: "b"}},
		"{{not a key}} {{":        {{text: "{{not a key}} {{"}},
		"{{{x}}}":                 {{text: "{{{x}}}"}},
		"{{1a}}{{\ta\n}}":         {{text: "{{1a}}"}, {key: "a"}},
		"{{ a {{b}}":              {{text: "{{ a "}, {key: "b"}},
		"{{}}{{ }}{{a}":           {{text: "{{}}{{ }}{{a}"}},
		"é{{\u00a0é}}{{\u2003b}}": {{text: "é{{\u00a0é}}"}, {key: "b"}},
	} {
		got := parseTemplate(in)
		if len(got) != len(want) {
			t.Errorf("%q: %+v, want %+v", in, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%q: %+v, want %+v", in, got, want)
				break
			}
		}
	}
}

// BenchmarkTemplateParse parses the adversarial templates of 128 KiB.
func BenchmarkTemplateParse(b *testing.B) {
	for name, s := range adversarial(128 << 10) {
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				parseTemplate(s)
			}
		})
	}
}
