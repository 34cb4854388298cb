package alerts

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/jobs"
)

// Severity ranks an alert. Routes match on it and the critical queue is
// reserved for critical alerts by default.
type Severity string

// The severities Herald knows.
const (
	SeverityCritical Severity = "critical"
	SeverityWarning  Severity = "warning"
	SeverityInfo     Severity = "info"
)

// Status tells whether an alert is firing or has resolved.
type Status string

// The alert statuses.
const (
	StatusFiring   Status = "firing"
	StatusResolved Status = "resolved"
)

// Alert is one event to tell people about, whatever sent it: the alerts API,
// a webhook, a heartbeat check or a feed. Every text field is plain text;
// routes render it into the destination's parse mode with escaping.
type Alert struct {
	// Title is the one-line summary. Required.
	Title string `json:"title"`
	// Body is the detail, plain text, possibly several lines.
	Body string `json:"body,omitempty"`
	// BodyHTML, when set, is the body as its sender formatted it, in
	// Telegram HTML (package inbound converts Slack's and Discord's
	// marks so). A route in HTML mode shows it in place of Body while the
	// whole body fits; Body stays the plain text every other use reads.
	// Only Go callers set it: it is no field of the API.
	BodyHTML string `json:"-"`
	// Severity is critical, warning or info; empty means info.
	Severity Severity `json:"severity,omitempty"`
	// Status is firing or resolved; empty means firing.
	Status Status `json:"status,omitempty"`
	// Source names the sender: "api", "alertmanager", "grafana", "github",
	// "sentry", "heartbeat", "feed", or what a client chose.
	Source string `json:"source,omitempty"`
	// URL links to the alert's details (http or https).
	URL string `json:"url,omitempty"`
	// Labels are free key/value pairs routes can match.
	Labels map[string]string `json:"labels,omitempty"`
	// Fingerprint identifies the event: the same fingerprint within the
	// idempotency window is delivered once. Optional.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Key identifies the alert itself, across its events: the firing and
	// the resolved notification of one alert share it (Alertmanager's own
	// fingerprint, say), while each has a Fingerprint of its own. Routes
	// thread an alert's messages in a chat by it. Optional: without one,
	// the Router derives it from the source, title and labels (Alert.Identity).
	Key string `json:"key,omitempty"`
	// ImageURL is a picture that goes with the alert (a graph, a
	// screenshot): an http or https URL that Telegram fetches. The
	// messages then go out as photos with the text as their caption.
	ImageURL string `json:"image_url,omitempty"`
	// Time is when the event happened; zero means when Herald received it.
	Time time.Time `json:"time,omitempty"`
	// Owner is the API token that sent the alert when that token may
	// reach only what it opened (a token without the operate scope: see
	// api.go, ownAlerts); "" for the alerts of webhooks, heartbeats,
	// feeds and operate-scope tokens. It is part of the alert's
	// identity, so a token's resolution reaches its own alert's thread
	// and escalation only.
	Owner string `json:"-"`
}

// ownerSpace starts the identity of an owned alert: "by/<token>/<key>".
// Token names hold no "/", so no two tokens' identities meet; an
// operate-scope token reaches a token's alert by spelling its identity
// so (as its message's thread key shows it).
const ownerSpace = "by/"

// Limits on alert fields, generous enough for real senders and small enough
// that one alert cannot fill a queue.
const (
	MaxTitleLen       = 1024
	MaxBodyLen        = 16384
	MaxURLLen         = 2048
	MaxLabels         = 64
	MaxLabelLen       = 1024
	MaxSourceLen      = 64
	MaxFingerprintLen = 200
	maxKeyLen         = 200
)

// Normalize fills defaults (severity info, status firing, time now) and
// trims spaces from the title, key and image URL, then validates.
func (a *Alert) Normalize(now time.Time) error {
	a.Title = strings.TrimSpace(a.Title)
	a.Key = strings.TrimSpace(a.Key)
	a.ImageURL = strings.TrimSpace(a.ImageURL)
	a.Severity = Severity(strings.ToLower(strings.TrimSpace(string(a.Severity))))
	if a.Severity == "" {
		a.Severity = SeverityInfo
	}
	a.Status = Status(strings.ToLower(strings.TrimSpace(string(a.Status))))
	if a.Status == "" {
		a.Status = StatusFiring
	}
	if a.Time.IsZero() {
		a.Time = now.UTC()
	}
	return a.Validate()
}

// Validate reports every invalid field as a *jobs.ValidationError whose
// field names are the JSON names above.
func (a *Alert) Validate() error {
	var fields []jobs.FieldError
	bad := func(field, format string, args ...any) {
		fields = append(fields, jobs.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	checkText := func(field, v string, max int) {
		if !utf8.ValidString(v) {
			bad(field, "is not valid UTF-8")
		} else if n := utf8.RuneCountInString(v); n > max {
			bad(field, "is %d characters long; the limit is %d", n, max)
		}
	}
	if strings.TrimSpace(a.Title) == "" {
		bad("title", "is required and must not be blank")
	}
	checkText("title", a.Title, MaxTitleLen)
	checkText("body", a.Body, MaxBodyLen)
	switch a.Severity {
	case "", SeverityCritical, SeverityWarning, SeverityInfo:
	default:
		bad("severity", "%q is not one of critical, warning, info", a.Severity)
	}
	switch a.Status {
	case "", StatusFiring, StatusResolved:
	default:
		bad("status", "%q is not one of firing, resolved", a.Status)
	}
	checkText("source", a.Source, MaxSourceLen)
	if a.URL != "" {
		if len(a.URL) > MaxURLLen {
			bad("url", "is %d bytes long; the limit is %d", len(a.URL), MaxURLLen)
		} else if !webURL(a.URL) {
			bad("url", "must be an absolute http or https URL")
		}
	}
	if len(a.Labels) > MaxLabels {
		bad("labels", "has %d labels; the limit is %d", len(a.Labels), MaxLabels)
	}
	for k, v := range a.Labels {
		if k == "" {
			bad("labels", "a label name must not be empty")
		}
		checkText("labels."+k, k+v, MaxLabelLen)
	}
	checkText("fingerprint", a.Fingerprint, MaxFingerprintLen)
	checkText("key", a.Key, maxKeyLen)
	if a.ImageURL != "" && !webURL(a.ImageURL) {
		bad("image_url", "must be an absolute http or https URL of at most %d bytes that Telegram can fetch", MaxURLLen)
	}
	if len(fields) > 0 {
		return &jobs.ValidationError{Fields: fields}
	}
	return nil
}

// webURL reports whether s is an absolute http or https URL within
// MaxURLLen.
func webURL(s string) bool {
	if len(s) > MaxURLLen {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Identity is the alert's Key, or when it has none a key derived from its
// source, title and labels: "auto:" and 32 hex digits; after
// "by/<owner>/" when it has an Owner. Alerts that repeat
// with the same source, title and labels share it, so a sender whose
// resolved notification has another title than the firing one should set
// Key.
func (a *Alert) Identity() string {
	if a.Owner != "" {
		return ownerSpace + a.Owner + "/" + a.baseIdentity()
	}
	return a.baseIdentity()
}

// baseIdentity is Identity without the owner.
func (a *Alert) baseIdentity() string {
	if a.Key != "" {
		return a.Key
	}
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(a.Source)
	field(a.Title)
	names := make([]string, 0, len(a.Labels))
	for k := range a.Labels {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		field(k)
		field(a.Labels[k])
	}
	return "auto:" + hex.EncodeToString(h.Sum(nil)[:16])
}

// Dispatched says where the alerts of one Dispatch call went: one entry per
// message enqueued (an alert matching two routes gives two).
type Dispatched struct {
	Messages []jobs.Result `json:"messages"`
	// Silenced lists the alerts a silence caught: they were recorded, not
	// sent.
	Silenced []SilencedAlert `json:"silenced,omitempty"`
	// Held lists the messages a route's quiet hours hold until the window
	// ends.
	Held []heldMessage `json:"held,omitempty"`
}

// ErrNoRoute is returned (wrapped) by Dispatch when an alert matches no route
// and the routing file has no default route. Nothing was enqueued for it.
var ErrNoRoute = errors.New("no route matches the alert and the routing file has no default route")

// Dispatcher turns alerts into SendMessage tasks through the routing table.
// It returns only after every task is stored in Redis. Errors: a
// *jobs.ValidationError for bad alerts (nothing enqueued), ErrNoRoute, or an
// error wrapping jobs.ErrUnavailable when Redis did not take them (the caller
// answers 503 and the sender retries; idempotency keys derived from the
// fingerprint make that retry safe).
type Dispatcher interface {
	Dispatch(ctx context.Context, batch []Alert) (Dispatched, error)
}
