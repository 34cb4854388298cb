package heartbeat

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// pingSettings is what a ping declares; zero values keep what is stored.
type pingSettings struct {
	// Interval is the promised time between pings; 0 keeps the stored one.
	// Declaring it turns a scheduled heartbeat into an interval one.
	Interval time.Duration
	// Schedule, when not nil, is the declared cron schedule with its time
	// zone; it turns an interval heartbeat into a scheduled one. Interval
	// and Schedule are never both set.
	Schedule *schedule
	// MaxRun bounds a run from /start to its success or failure; nil keeps
	// the stored bound, 0 means the grace.
	MaxRun *time.Duration
	// Grace is extra time before the heartbeat counts as overdue; nil keeps
	// the stored one (or the default).
	Grace *time.Duration
	// Severity of the heartbeat's alerts; "" keeps the stored one.
	Severity alerts.Severity
	// Labels replace the stored labels when not nil.
	Labels map[string]string
}

// pingBody is the optional JSON body of a ping.
type pingBody struct {
	Interval   *string           `json:"interval"`
	Schedule   *string           `json:"schedule"`
	TimeZone   *string           `json:"time_zone"`
	MaxRunTime *string           `json:"max_run_time"`
	Grace      *string           `json:"grace"`
	Severity   *string           `json:"severity"`
	Labels     map[string]string `json:"labels"`
}

// labelHeartbeat is the label every heartbeat alert carries, set to the
// heartbeat's name.
const labelHeartbeat = "heartbeat"

// validateName checks a heartbeat name: 1 to 64 characters from
// A-Z a-z 0-9 . _ -
func validateName(name string) *jobs.FieldError {
	bad := func(msg string) *jobs.FieldError { return &jobs.FieldError{Field: "name", Message: msg} }
	if name == "" {
		return bad("is required: PUT /v1/heartbeats/{name}")
	}
	if len(name) > maxNameLen {
		return bad(fmt.Sprintf("is %d characters long; the limit is %d", len(name), maxNameLen))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return bad(fmt.Sprintf("may only hold letters, digits, '.', '_' and '-'; %q is not allowed", string(rune(c))))
		}
	}
	return nil
}

// parseDuration reads a Go duration ("90s", "5m", "1h30m") or a whole
// number of days ("7d").
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok && days != "" {
		n, err := strconv.ParseInt(days, 10, 64)
		if err == nil && n >= 0 && n <= 100_000 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("must be a duration such as 90s, 5m, 1h30m or 7d")
	}
	return d, nil
}

// parsePing reads a ping's settings from the query string and the optional
// JSON body (already size-limited); contentType is the body's. Every invalid
// field is reported at once.
func parsePing(query url.Values, contentType string, body []byte) (pingSettings, *httpapi.Error) {
	b, herr := decodePingBody(contentType, body)
	if herr != nil {
		return pingSettings{}, herr
	}
	r := &pingReader{query: query, body: b}
	r.rejectUnknownParams()
	p := pingSettings{
		Interval: r.interval(),
		Schedule: r.schedule(),
		MaxRun:   r.maxRun(),
		Grace:    r.grace(),
		Severity: r.severity(),
		Labels:   r.labels(),
	}
	if len(r.fields) > 0 {
		return pingSettings{}, httpapi.Invalid("invalid heartbeat ping", r.fields...)
	}
	return p, nil
}

// decodePingBody decodes the optional JSON body of a ping; an empty body is
// an empty pingBody.
func decodePingBody(contentType string, body []byte) (pingBody, *httpapi.Error) {
	var b pingBody
	if len(bytes.TrimSpace(body)) == 0 {
		return b, nil
	}
	// The body was read and bounded by the caller; DecodeJSON adds the
	// strict decoding (unknown fields, types, trailing data). A nil
	// writer is fine: the size limit cannot be hit again.
	req := &http.Request{Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body))}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if err := httpapi.DecodeJSON(nil, req, int64(len(body))+1, &b); err != nil {
		var he *httpapi.Error
		if errors.As(err, &he) {
			return pingBody{}, he
		}
		return pingBody{}, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "%v", err)
	}
	return b, nil
}

// pingReader reads each setting of a ping from its query string and body,
// collecting every problem rather than stopping at the first, so that the
// caller can fix them all in one go. A setting with a problem reads as
// absent.
type pingReader struct {
	query  url.Values
	body   pingBody
	fields []jobs.FieldError
}

// bad records a problem with field.
func (r *pingReader) bad(field, format string, args ...any) {
	r.fields = append(r.fields, jobs.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// value returns the one value of a setting, from the query or the body;
// both is fine when they agree.
func (r *pingReader) value(field string, fromBody *string) (string, bool) {
	q, inQuery := r.query[field]
	if inQuery && len(q) != 1 {
		r.bad(field, "is given %d times in the query string; give it once", len(q))
		return "", false
	}
	switch {
	case inQuery && fromBody != nil && strings.TrimSpace(q[0]) != strings.TrimSpace(*fromBody):
		r.bad(field, "differs between the query string (%q) and the body (%q); give it once", q[0], *fromBody)
		return "", false
	case inQuery:
		return q[0], true
	case fromBody != nil:
		return *fromBody, true
	}
	return "", false
}

// rejectUnknownParams reports every query parameter a ping does not take,
// in name order.
func (r *pingReader) rejectUnknownParams() {
	var unknown []string
	for k := range r.query {
		switch k {
		case "interval", "schedule", "time_zone", "grace", "max_run_time", "severity":
		default:
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		r.bad(k, "is not a known query parameter; use interval, schedule, time_zone, grace, max_run_time or severity (labels go in the JSON body)")
	}
}

// interval is the declared interval, or 0 to keep the stored one.
func (r *pingReader) interval() time.Duration {
	s, ok := r.value("interval", r.body.Interval)
	if !ok {
		return 0
	}
	d, err := parseDuration(s)
	switch {
	case err != nil:
		r.bad("interval", "%v", err)
	case d < minInterval || d > maxInterval:
		r.bad("interval", "is %v; use between %v and %v", d, minInterval, maxInterval)
	default:
		return d
	}
	return 0
}

// schedule is the declared schedule with its time zone, or nil to keep
// the stored one (or the interval). It reports a schedule declared along
// with an interval, and a time zone declared without a schedule.
func (r *pingReader) schedule() *schedule {
	expr, hasExpr := r.value("schedule", r.body.Schedule)
	tz, hasTZ := r.value("time_zone", r.body.TimeZone)
	_, hasInterval := r.query["interval"]
	hasInterval = hasInterval || r.body.Interval != nil
	switch {
	case hasExpr && hasInterval:
		r.bad("schedule", "cannot be combined with interval: a heartbeat expects pings either every interval or on a schedule; declare one of them")
		return nil
	case hasTZ && !hasExpr:
		r.bad("time_zone", "is only accepted together with schedule: the zone belongs to the schedule, so declare both (the default zone is %s)", defaultTimeZone)
		return nil
	case !hasExpr:
		return nil
	}
	s, problems := parseSchedule(expr, tz, time.Now())
	for _, field := range []string{"schedule", "time_zone"} {
		if msg, ok := problems[field]; ok {
			r.bad(field, "%s", msg)
		}
	}
	return s
}

// maxRun is the declared longest run time, or nil to keep the stored one.
func (r *pingReader) maxRun() *time.Duration {
	s, ok := r.value("max_run_time", r.body.MaxRunTime)
	if !ok {
		return nil
	}
	d, err := parseDuration(s)
	switch {
	case err != nil:
		r.bad("max_run_time", "%v", err)
	case d < 0 || d > maxInterval:
		r.bad("max_run_time", "is %v; use between 0s (the grace) and %v", d, maxInterval)
	default:
		return &d
	}
	return nil
}

// grace is the declared grace, or nil to keep the stored one.
func (r *pingReader) grace() *time.Duration {
	s, ok := r.value("grace", r.body.Grace)
	if !ok {
		return nil
	}
	d, err := parseDuration(s)
	switch {
	case err != nil:
		r.bad("grace", "%v", err)
	case d < 0 || d > maxInterval:
		r.bad("grace", "is %v; use between 0s and %v", d, maxInterval)
	default:
		return &d
	}
	return nil
}

// severity is the declared severity, or "" to keep the stored one.
func (r *pingReader) severity() alerts.Severity {
	s, ok := r.value("severity", r.body.Severity)
	if !ok {
		return ""
	}
	sev := alerts.Severity(strings.ToLower(strings.TrimSpace(s)))
	switch sev {
	case alerts.SeverityCritical, alerts.SeverityWarning, alerts.SeverityInfo:
		return sev
	}
	r.bad("severity", "%q is not one of critical, warning, info", s)
	return ""
}

// labels checks the body's labels, which replace the stored ones when not
// nil.
func (r *pingReader) labels() map[string]string {
	labels := r.body.Labels
	if labels == nil {
		return nil
	}
	if _, ok := labels[labelHeartbeat]; ok {
		r.bad("labels."+labelHeartbeat, "is set by Herald to the heartbeat's name; choose another label name")
	}
	// The alert's own rules bound the labels (one more is added for the
	// heartbeat name).
	probe := alerts.Alert{Title: "probe", Labels: labels}
	var verr *jobs.ValidationError
	if err := probe.Validate(); errors.As(err, &verr) {
		for _, f := range verr.Fields {
			if f.Field == "labels" || strings.HasPrefix(f.Field, "labels.") {
				r.fields = append(r.fields, f)
			}
		}
	}
	if len(labels) == alerts.MaxLabels {
		r.bad("labels", "has %d labels; the limit is %d (Herald adds the heartbeat label)", len(labels), alerts.MaxLabels-1)
	}
	return labels
}
