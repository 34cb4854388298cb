package silences

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/alerts"
)

// A regular expression matcher runs on every alert, against a value of up
// to alerts.MaxLabelLen characters, and Go's RE2 engine takes time in
// proportion to the value's length times the size of the compiled program
// (its instructions). So the size is what the limits of Config bound: per
// matcher, per silence and over the fleet's live silences. It is the
// number of instructions of the program that the anchored expression
// (anchored) compiles to, measured with regexp/syntax before any
// regexp.Compile.

// maxMatchedLen bounds, in bytes, a value a regular expression is run
// against: the longest label value an alert may carry (alerts.MaxLabelLen
// characters). The Router normalises alerts first, so it only guards
// callers of Silence.Matches that do not; a longer value matches no
// regular expression.
const maxMatchedLen = alerts.MaxLabelLen * utf8.UTFMax

// estimateSlack is how much larger than the limit an expression's
// estimated size may be for it still to be compiled and measured exactly.
// The estimate is an upper bound within a small factor of the real size;
// beyond the slack the expression is refused unmeasured, so that a huge
// one costs nothing but its parse.
const estimateSlack = 4

// anchored is the expression a regular expression matcher compiles to:
// its value must match the whole alert value.
func anchored(v string) string { return "^(?:" + v + ")$" }

// compileMatcher compiles a matcher's value for matching.
func compileMatcher(v string) (*regexp.Regexp, error) { return regexp.Compile(anchored(v)) }

// regexError is the message for an expression that does not parse.
func regexError(err error) string {
	return "is not a valid regular expression (Go RE2 syntax): " + strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

// programSize returns the number of instructions v compiles to (anchored),
// or, with exact false, an estimate above estimateSlack × limit when v is
// too large to be worth compiling. The error is a parse error of v.
func programSize(v string, limit int) (size int, exact bool, err error) {
	if _, err := syntax.Parse(v, syntax.Perl); err != nil {
		return 0, false, err
	}
	re, err := syntax.Parse(anchored(v), syntax.Perl)
	if err != nil {
		return 0, false, err
	}
	ceiling := estimateSlack * limit
	if est := estimate(re, ceiling); est > ceiling {
		return est, false, nil
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, false, err
	}
	return len(prog.Inst), true, nil
}

// estimate returns an upper bound of the instructions re compiles to
// after Simplify, without expanding its repetitions; any result above
// ceiling is ceiling+1, so that nested repetitions cannot overflow.
func estimate(re *syntax.Regexp, ceiling int) int {
	clamp := func(n int) int { return min(n, ceiling+1) }
	switch re.Op {
	case syntax.OpLiteral:
		return max(1, len(re.Rune))
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return clamp(2 + estimate(re.Sub[0], ceiling))
	case syntax.OpConcat, syntax.OpAlternate:
		n := len(re.Sub)
		for _, sub := range re.Sub {
			n = clamp(n + estimate(sub, ceiling))
		}
		return n
	case syntax.OpRepeat:
		copies := re.Max
		if copies < 0 {
			copies = re.Min + 1
		}
		each := estimate(re.Sub[0], ceiling) + 2
		if copies > 0 && each > (ceiling+1)/copies {
			return ceiling + 1
		}
		return clamp(copies*each + 1)
	}
	return 1
}

// probes are the values a regular expression is tried on to tell whether
// it matches (nearly) every value: short and long, ASCII and not, words,
// digits, punctuation and spaces. A value with a line break is not among
// them, so that ".+" counts.
var probes = []string{
	"a", "Z", "0", "7", "x9", "db", "eu", "api-gw", "db-01.prod.example.com", "10.0.0.1:9100", "node_exporter",
	"warning", "critical", "info", "alertmanager", "grafana", "heartbeat", "feed", "1234567890", "-1.5e3",
	"-", ".", "_", " ", "/", ":", "@", "#", "=", "\t", `!"#$%&'()*+,-./:;<=>?@[\]^_` + "`{|}~",
	"Mixed Case, with spaces", "tab\tseparated", "é", "Ünïcödé", "日本語", "Привет", "مرحبا", "🙂", "emoji 🔥 and text",
	strings.Repeat("long-value_0123456789 ", 11), strings.Repeat("é", 200),
}

// matchesProbes reports whether re matches every probe.
func matchesProbes(re *regexp.Regexp) bool {
	for _, p := range probes {
		if !re.MatchString(p) {
			return false
		}
	}
	return true
}

// Runs of (nearly) any character that an expression must cover, from
// wideRunMin to wideRunMax characters, to count as matching (nearly)
// every value by its syntax; a wide class leaves out no ASCII letter or
// digit and at most wideClassGaps other printable ASCII characters.
const (
	wideRunMin    = 3
	wideRunMax    = 64
	wideClassGaps = 3
)

// coversWideRuns reports whether the expression v matches every string of
// wide characters (see wideChar) whose length is within [wideRunMin,
// wideRunMax]: ".{0,100}", "\S+", "[^,]*x?" or "(?:.{0,10}){0,20}" do;
// this catches what the probes miss by a length or a rare character.
func coversWideRuns(v string) bool {
	re, err := syntax.Parse(v, syntax.Perl)
	if err != nil {
		return false
	}
	iv, ok := wideSpan(re)
	return ok && iv.lo <= wideRunMin && atLeast(iv.hi, wideRunMax)
}

// lenSpan is a range of lengths [lo, hi]; hi < 0 means no end.
type lenSpan struct{ lo, hi int }

const unbounded = -1

func addLen(a, b int) int {
	if a == unbounded || b == unbounded {
		return unbounded
	}
	return a + b
}

func mulLen(a, k int) int {
	if a == unbounded || k == unbounded {
		if a == 0 {
			return 0
		}
		return unbounded
	}
	return min(a*k, 1<<20)
}

func atLeast(a, b int) bool { return a == unbounded || b != unbounded && a >= b }

// wideSpan returns the lengths for which re matches every string of wide
// characters (any one length within the lenSpan), or false when it is not
// known to match them all for any length. It is a conservative, syntactic
// reading of re.
func wideSpan(re *syntax.Regexp) (lenSpan, bool) {
	switch re.Op {
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return lenSpan{1, 1}, true
	case syntax.OpCharClass:
		return lenSpan{1, 1}, wideClass(re.Rune)
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine:
		return lenSpan{0, 0}, true
	case syntax.OpLiteral:
		return lenSpan{0, 0}, len(re.Rune) == 0
	case syntax.OpCapture:
		return wideSpan(re.Sub[0])
	case syntax.OpConcat:
		out := lenSpan{0, 0}
		for _, sub := range re.Sub {
			iv, ok := wideSpan(sub)
			if !ok {
				return lenSpan{}, false
			}
			out = lenSpan{addLen(out.lo, iv.lo), addLen(out.hi, iv.hi)}
		}
		return out, true
	case syntax.OpAlternate:
		return wideAlternate(re.Sub)
	case syntax.OpQuest:
		return wideRepeat(re.Sub[0], 0, 1)
	case syntax.OpStar:
		return wideRepeat(re.Sub[0], 0, unbounded)
	case syntax.OpPlus:
		return wideRepeat(re.Sub[0], 1, unbounded)
	case syntax.OpRepeat:
		return wideRepeat(re.Sub[0], re.Min, re.Max)
	}
	return lenSpan{}, false
}

// wideAlternate merges the spans of alternatives that touch, and keeps
// the one reaching furthest.
func wideAlternate(subs []*syntax.Regexp) (lenSpan, bool) {
	var ivs []lenSpan
	for _, sub := range subs {
		if iv, ok := wideSpan(sub); ok {
			ivs = append(ivs, iv)
		}
	}
	if len(ivs) == 0 {
		return lenSpan{}, false
	}
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(ivs) && !merged; i++ {
			for j := i + 1; j < len(ivs) && !merged; j++ {
				a, b := ivs[i], ivs[j]
				if atLeast(addLen(a.hi, 1), b.lo) && atLeast(addLen(b.hi, 1), a.lo) {
					ivs[i] = lenSpan{min(a.lo, b.lo), maxLen(a.hi, b.hi)}
					ivs = append(ivs[:j], ivs[j+1:]...)
					merged = true
				}
			}
		}
	}
	best := ivs[0]
	for _, iv := range ivs[1:] {
		if atLeast(iv.hi, best.hi) && iv.hi != best.hi {
			best = iv
		}
	}
	return best, true
}

func maxLen(a, b int) int {
	if atLeast(a, b) {
		return a
	}
	return b
}

// wideRepeat is the lenSpan of sub repeated from n to m times (m unbounded:
// no end). Copies of a lenSpan [lo, hi] join up when 2lo <= hi+1; otherwise
// only n copies (at least one) are counted.
func wideRepeat(sub *syntax.Regexp, n, m int) (lenSpan, bool) {
	iv, ok := wideSpan(sub)
	if !ok {
		return lenSpan{}, false
	}
	first := n
	if iv.lo > 1 && first == 0 {
		first = 1 // zero copies (length 0) do not join lo
	}
	if iv.hi == unbounded || 2*iv.lo <= iv.hi+1 {
		return lenSpan{mulLen(iv.lo, first), mulLen(iv.hi, m)}, true
	}
	return lenSpan{mulLen(iv.lo, first), mulLen(iv.hi, first)}, true
}

// wideClass reports whether a class (pairs of rune ranges) holds every
// ASCII letter and digit and all but at most wideClassGaps of the other
// printable ASCII characters: [^,] and \S are wide, [^a] and \w are not.
func wideClass(ranges []rune) bool {
	has := func(r rune) bool {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= r && r <= ranges[i+1] {
				return true
			}
		}
		return false
	}
	gaps := 0
	for r := ' '; r <= '~'; r++ {
		switch {
		case has(r):
		case r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			return false
		default:
			gaps++
		}
	}
	return gaps <= wideClassGaps
}

// broadness says why a matcher matches (nearly) every alert, or "" when
// it does not: it is the empty value (any alert without the label); its
// expression matches the empty value, or every severity for a severity
// matcher; its syntax covers every run of (nearly) any character
// (coversWideRuns); or it matches every probe. The matcher must be valid
// and compiled.
func (m *Matcher) broadness() string {
	if !m.IsRegex {
		if m.Value == "" {
			return "is empty, which every alert without the label matches"
		}
		return ""
	}
	switch {
	case m.re == nil:
		return ""
	case m.re.MatchString(""):
		return fmt.Sprintf("%q matches the empty value, which every alert without the label has", m.Value)
	case m.Name == fieldSeverity && m.re.MatchString(string(alerts.SeverityCritical)) &&
		m.re.MatchString(string(alerts.SeverityWarning)) && m.re.MatchString(string(alerts.SeverityInfo)):
		return fmt.Sprintf("%q matches every severity", m.Value)
	case coversWideRuns(m.Value):
		return fmt.Sprintf("%q matches any run of (nearly) any characters", m.Value)
	case matchesProbes(m.re):
		return fmt.Sprintf("%q matches every kind of value (see docs/SILENCES.md, \"Silences that match everything\")", m.Value)
	}
	return ""
}
