package alerts

import (
	"regexp"
	"strconv"
	"text/template"

	"github.com/herald-dev/herald/internal/markup"
)

// route is one entry of the routes list, resolved against the defaults.
type route struct {
	name string
	// bot is the bot that sends the route's messages; "" is the default
	// bot.
	bot          string
	isDefault    bool
	match        matcher
	destinations []destination
	mode         markup.Mode
	tmpl         *template.Template // nil: the built-in template of mode
	coalesce     bool
	// queue is the configured queue; "" picks critical for critical alerts
	// and default otherwise.
	queue string
	// silent is the configured disable_notification; nil means silent for
	// info alerts only.
	silent    *bool
	noPreview bool
	// quiet is the route's quiet hours; nil when it has none.
	quiet *quietHours
	// onResolve is how a resolved alert's message relates to the firing
	// one: resolveReply, resolveEdit or resolveNew.
	onResolve string
	// buttons are the callbacks actions of the keyboard under a firing
	// alert's message, in buttons.Actions order; nil: no keyboard.
	buttons []string
	// allowed are who may press the buttons: @usernames and numeric user
	// ids; nil: anyone in the chat.
	allowed []string
	// escalation names the escalation policy of the route's firing
	// alerts; "" none.
	escalation string
	// alertmanager, when set, silences the route's Alertmanager alerts in
	// their Alertmanager on an acknowledgement (parse_alertmanager.go).
	alertmanager *alertmanagerAck
}

// The values of on_resolve.
const (
	// resolveReply sends the resolution as a reply to the firing message.
	resolveReply = "reply"
	// resolveEdit replaces the firing message's text with the resolution.
	resolveEdit = "edit"
	// resolveNew sends the resolution as a message of its own.
	resolveNew = "new"
)

// destination is one chat (and optional forum topic) a route sends to.
type destination struct {
	chat   string
	thread int
}

// key identifies the destination inside an idempotency key.
func (d destination) key() string {
	if d.thread == 0 {
		return d.chat
	}
	return d.chat + ":" + strconv.Itoa(d.thread)
}

// matcher holds a route's conditions; an empty matcher matches every alert.
type matcher struct {
	sources    []valueMatcher
	severities []Severity
	labels     []labelMatcher
}

// valueMatcher is an exact value or, written "=~regex", a regular
// expression anchored at both ends.
type valueMatcher struct {
	exact string
	re    *regexp.Regexp
}

func (v valueMatcher) matches(s string) bool {
	if v.re != nil {
		return v.re.MatchString(s)
	}
	return v.exact == s
}

// labelMatcher tests one label; a missing label counts as the empty value.
type labelMatcher struct {
	name string
	valueMatcher
}

func (r *route) matches(a *Alert) bool {
	m := &r.match
	if len(m.sources) > 0 {
		ok := false
		for _, s := range m.sources {
			if s.matches(a.Source) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(m.severities) > 0 {
		ok := false
		for _, s := range m.severities {
			if s == a.Severity {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, l := range m.labels {
		if !l.matches(a.Labels[l.name]) {
			return false
		}
	}
	return true
}
