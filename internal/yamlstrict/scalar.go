package yamlstrict

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"
)

// textTags are the tags a plain value may carry and still be read as
// text: YAML guesses a type for every unquoted value, but "5", "true" or
// "2026-01-02" mean those characters when a setting wants text.
var textTags = []string{"!!str", "!!null", "!!int", "!!float", "!!bool", "!!timestamp"}

// Scalar checks that n is a single value (not a list or mapping) and
// returns its text; an empty value (null) gives "". ok is false when n is
// missing or not a single value.
func (w *Walker) Scalar(n *yaml.Node, path string) (s string, ok bool) {
	if !w.usable(n, path) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		w.wrongType(n, path, wantScalar, "")
		return "", false
	}
	if isNull(n) {
		return "", true
	}
	return n.Value, true
}

// String is Scalar for a value read as text. A value with an explicit tag
// YAML gives no text meaning to (!!binary, a custom !tag) is refused,
// since the author evidently meant something else.
func (w *Walker) String(n *yaml.Node, path string) (string, bool) {
	s, ok := w.Scalar(n, path)
	if !ok {
		return "", false
	}
	for _, t := range textTags {
		if n.Tag == t {
			return s, true
		}
	}
	w.Report(n, path, fmt.Sprintf("has the tag %s, expected %s", n.Tag, wantText.name), "remove the tag, or "+wantText.fix)
	return "", false
}

// Bool returns a true or false value. YAML 1.1 spellings (yes, no, on,
// off) are refused: they are text in YAML 1.2, and which one a reader
// takes them for is a guess. An empty value is refused too: false is a
// choice the file should spell out.
func (w *Walker) Bool(n *yaml.Node, path string) (bool, bool) {
	if _, ok := w.Scalar(n, path); !ok {
		return false, false
	}
	if n.Tag == "!!bool" {
		if b, err := strconv.ParseBool(strings.ToLower(n.Value)); err == nil {
			return b, true
		}
	}
	w.wrongType(n, path, wantBool, "")
	return false, false
}

// Int returns a whole number.
func (w *Walker) Int(n *yaml.Node, path string) (int, bool) {
	if _, ok := w.Scalar(n, path); !ok {
		return 0, false
	}
	if n.Tag == "!!int" {
		if i, err := strconv.Atoi(n.Value); err == nil {
			return i, true
		}
	}
	w.wrongType(n, path, wantInt, "")
	return 0, false
}

// Duration returns a Go duration such as "90s" or "1h30m". Whether it may
// be zero or negative is the caller's business.
func (w *Walker) Duration(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := w.String(n, path)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		w.wrongType(n, path, wantDuration, "")
		return 0, false
	}
	return d, true
}
