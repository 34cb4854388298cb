package feeds

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/yamlstrict"
)

// defaults for the settings of feeds.yaml.
const (
	// defaultInterval is how often a feed is polled when neither the feed
	// nor the defaults section says.
	defaultInterval = 5 * time.Minute
	// defaultTimeout bounds one fetch (connect, headers and body).
	defaultTimeout = 20 * time.Second
	// defaultUserAgent is the User-Agent header sent with every fetch.
	defaultUserAgent = "Herald-feeds/1 (+https://github.com/herald-dev/herald)"
	// defaultSource is the alert source of feed items.
	defaultSource = "feed"
)

// Bounds of the settings of feeds.yaml.
const (
	minInterval     = 10 * time.Second
	maxInterval     = 24 * time.Hour
	minTimeout      = time.Second
	maxTimeout      = 5 * time.Minute
	maxFeeds        = 10000
	maxNameLen      = 64
	maxUserAgentLen = 256
	maxFeedLabels   = 32
	maxLabelNameLen = 64
)

// labelFeed is the label every feed alert carries: the feed's name. A
// configured label may not use it.
const labelFeed = "feed"

var (
	nameRE      = regexp.MustCompile(`^[a-z0-9_-]+$`)
	labelNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// file is the content of feeds.yaml: settings shared by every feed and the
// list of feeds.
type file struct {
	// Defaults apply to every feed that does not set its own value.
	Defaults defaults
	// Feeds are the feeds to poll; at least one.
	Feeds []feed

	// path names the file in errors; lines maps a field path such as
	// "feeds[2].url" to its position in the file. Both are empty for a file
	// built in code.
	path  string
	lines map[string]position
}

// defaults are the settings a feed inherits.
type defaults struct {
	// Interval between polls of a feed; default 5m, between 10s and 24h.
	Interval time.Duration
	// Timeout of one fetch; default 20s, between 1s and 5m.
	Timeout time.Duration
	// UserAgent is sent with every request; default defaultUserAgent.
	UserAgent string
	// Severity of the alerts; default info.
	Severity alerts.Severity
	// Source of the alerts; default "feed".
	Source string
	// Labels are added to every feed's alerts (a feed's own labels win).
	Labels map[string]string
}

// feed is one feed to poll.
type feed struct {
	// Name identifies the feed in Redis keys, labels, logs and metrics:
	// 1 to 64 of a-z, 0-9, '_' and '-', unique in the file. Renaming a
	// feed makes it a new feed (its first poll sends nothing).
	Name string
	// URL is the feed's absolute http or https address, without
	// credentials.
	URL string
	// Interval, Timeout, Severity and Source override the defaults when
	// set.
	Interval time.Duration
	Timeout  time.Duration
	Severity alerts.Severity
	Source   string
	// Labels are added to the feed's alerts, next to feed=<name>.
	Labels map[string]string
	// Line is the line of the feed's entry in the file (0 when built in
	// code); errors about the feed name it.
	Line int
}

// configError is one problem in feeds.yaml: where it is, which field, and
// what to do about it.
type configError struct {
	// Path is the file's path, when known.
	Path string
	// Line and Column locate the offending node, 1-based; 0 when unknown.
	Line   int
	Column int
	// Field is the setting's path, such as "feeds[2].url".
	Field string
	// Msg says what is wrong and how to fix it.
	Msg string
}

// Error prints path:line:column: field: msg, in the style of every
// configuration file error (see package yamlstrict).
func (e *configError) Error() string {
	return yamlstrict.Problem{Line: e.Line, Column: e.Column, Path: e.Field, What: e.Msg}.Format(e.Path)
}

// Validate reports every invalid setting as a *configError (joined). Zero
// values mean "use the default" and are valid.
func (f file) Validate() error {
	var errs []error
	add := func(field string, fallbackLine int, format string, args ...any) {
		at := f.lines[field]
		if at.line == 0 {
			at = position{line: fallbackLine}
		}
		errs = append(errs, &configError{Path: f.path, Line: at.line, Column: at.column, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	d := f.Defaults
	checkInterval(add, "defaults.interval", 0, d.Interval)
	checkTimeout(add, "defaults.timeout", 0, d.Timeout)
	if d.UserAgent != "" {
		if len(d.UserAgent) > maxUserAgentLen || !printable(d.UserAgent) {
			add("defaults.user_agent", 0, "must be printable text of at most %d bytes", maxUserAgentLen)
		}
	}
	checkSeverity(add, "defaults.severity", 0, d.Severity)
	checkSource(add, "defaults.source", 0, d.Source)
	checkLabels(add, "defaults.labels", 0, d.Labels)

	if len(f.Feeds) == 0 {
		add("feeds", 0, "no feeds: add at least one entry with a name and a url")
	}
	if len(f.Feeds) > maxFeeds {
		add("feeds", 0, "has %d feeds; the limit is %d", len(f.Feeds), maxFeeds)
	}
	first := map[string]int{}
	for i, fd := range f.Feeds {
		at := fmt.Sprintf("feeds[%d]", i)
		switch {
		case fd.Name == "":
			add(at+".name", fd.Line, "is required: a unique name of a-z, 0-9, '_' and '-'")
		case len(fd.Name) > maxNameLen || !nameRE.MatchString(fd.Name):
			add(at+".name", fd.Line, "%q must be 1 to %d characters of a-z, 0-9, '_' and '-'", fd.Name, maxNameLen)
		default:
			if j, dup := first[fd.Name]; dup {
				add(at+".name", fd.Line, "%q is already the name of feeds[%d]; names must be unique", fd.Name, j)
			} else {
				first[fd.Name] = i
			}
		}
		if msg := checkURL(fd.URL); msg != "" {
			add(at+".url", fd.Line, "%s", msg)
		}
		checkInterval(add, at+".interval", fd.Line, fd.Interval)
		checkTimeout(add, at+".timeout", fd.Line, fd.Timeout)
		checkSeverity(add, at+".severity", fd.Line, fd.Severity)
		checkSource(add, at+".source", fd.Line, fd.Source)
		checkLabels(add, at+".labels", fd.Line, fd.Labels)
	}
	return errors.Join(errs...)
}

// WithDefaults returns a copy with the defaults section completed and every
// feed's unset settings taken from it; each feed's labels become the default
// labels overridden by its own.
func (f file) WithDefaults() file {
	d := f.Defaults
	if d.Interval == 0 {
		d.Interval = defaultInterval
	}
	if d.Timeout == 0 {
		d.Timeout = defaultTimeout
	}
	if d.UserAgent == "" {
		d.UserAgent = defaultUserAgent
	}
	if d.Severity == "" {
		d.Severity = alerts.SeverityInfo
	}
	if d.Source == "" {
		d.Source = defaultSource
	}
	out := f
	out.Defaults = d
	out.Feeds = make([]feed, len(f.Feeds))
	for i, fd := range f.Feeds {
		if fd.Interval == 0 {
			fd.Interval = d.Interval
		}
		if fd.Timeout == 0 {
			fd.Timeout = d.Timeout
		}
		if fd.Severity == "" {
			fd.Severity = d.Severity
		}
		if fd.Source == "" {
			fd.Source = d.Source
		}
		labels := make(map[string]string, len(d.Labels)+len(fd.Labels))
		for k, v := range d.Labels {
			labels[k] = v
		}
		for k, v := range fd.Labels {
			labels[k] = v
		}
		fd.Labels = labels
		out.Feeds[i] = fd
	}
	return out
}

type addFunc func(field string, fallbackLine int, format string, args ...any)

func checkInterval(add addFunc, field string, line int, d time.Duration) {
	if d != 0 && (d < minInterval || d > maxInterval) {
		add(field, line, "%v is out of range: use a duration between %v and %v, such as 5m", d, minInterval, maxInterval)
	}
}

func checkTimeout(add addFunc, field string, line int, d time.Duration) {
	if d != 0 && (d < minTimeout || d > maxTimeout) {
		add(field, line, "%v is out of range: use a duration between %v and %v, such as 20s", d, minTimeout, maxTimeout)
	}
}

func checkSeverity(add addFunc, field string, line int, s alerts.Severity) {
	switch s {
	case "", alerts.SeverityCritical, alerts.SeverityWarning, alerts.SeverityInfo:
	default:
		add(field, line, "%q is not one of critical, warning, info", s)
	}
}

func checkSource(add addFunc, field string, line int, s string) {
	if s != "" && (utf8.RuneCountInString(s) > alerts.MaxSourceLen || !printable(s)) {
		add(field, line, "must be printable text of at most %d characters", alerts.MaxSourceLen)
	}
}

func checkLabels(add addFunc, field string, line int, labels map[string]string) {
	if len(labels) > maxFeedLabels {
		add(field, line, "has %d labels; the limit is %d", len(labels), maxFeedLabels)
	}
	for k, v := range labels {
		switch {
		case k == labelFeed:
			add(field+"."+k, line, "the label %q is set by the poller to the feed's name; choose another name", labelFeed)
		case len(k) > maxLabelNameLen || !labelNameRE.MatchString(k):
			add(field+"."+k, line, "label names are 1 to %d characters of letters, digits and '_', not starting with a digit", maxLabelNameLen)
		}
		if !utf8.ValidString(v) || utf8.RuneCountInString(k+v) > alerts.MaxLabelLen {
			add(field+"."+k, line, "the value must be UTF-8 text; name and value together at most %d characters", alerts.MaxLabelLen)
		}
	}
}

// checkURL returns what is wrong with a feed URL, or "".
func checkURL(raw string) string {
	if raw == "" {
		return "is required: the feed's http or https address"
	}
	if len(raw) > alerts.MaxURLLen {
		return fmt.Sprintf("is %d bytes long; the limit is %d", len(raw), alerts.MaxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "is not a valid URL: write an absolute address such as https://example.com/feed.xml"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "must start with http:// or https://"
	}
	if u.Host == "" || u.Hostname() == "" {
		return "has no host: write an absolute address such as https://example.com/feed.xml"
	}
	if u.User != nil {
		return "must not contain credentials (user:password@); they would end up in logs"
	}
	return ""
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}
