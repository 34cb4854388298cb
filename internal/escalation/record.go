package escalation

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Home is where an alert's message is: a chat (and forum topic) and the
// key of the message's thread (jobs.Thread.Key). The steps reply there.
// Ref is the reference of the message's buttons (callbacks), "" when it
// has none: the steps' direct messages carry the same buttons.
type Home struct {
	Chat   string `json:"chat"`
	Topic  int    `json:"topic,omitempty"`
	Thread string `json:"thread"`
	Ref    string `json:"ref,omitempty"`
}

// Subject is what an escalation says about its alert, and what a silence
// is matched against.
type Subject struct {
	Title    string            `json:"title"`
	Severity string            `json:"severity,omitempty"`
	Source   string            `json:"source,omitempty"`
	URL      string            `json:"url,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
}

// critical reports whether the alert is critical, which repeat_interval
// needs.
func (s Subject) critical() bool { return s.Severity == "critical" }

// Start begins the escalation of a firing alert on one route.
type Start struct {
	// Bot sends the alert's messages ("" the default bot); Route is the
	// route's name; Identity names the alert across its events
	// (alerts.Alert.Identity).
	Bot, Route, Identity string
	// Policy names the route's escalation policy.
	Policy string
	// Homes are the alert's messages, one per destination of the route.
	Homes []Home
	Alert Subject
	// FiredAt is when the alert fired.
	FiredAt time.Time
}

// Stop ends the escalation of a resolved alert on one route.
type Stop struct {
	Bot, Route, Identity string
	// Homes are the alert's messages, as Start had them.
	Homes []Home
}

// idOf names the escalation of an alert on a route: one at a time.
func idOf(bot, route, identity string) string {
	sum := sha256.Sum256([]byte(bot + "\n" + route + "\n" + identity))
	return hex.EncodeToString(sum[:16])
}

// The states of an escalation (the record's state field).
const (
	stateActive   = "active"
	stateAcked    = "acked"
	stateSilenced = "silenced"
	stateDone     = "done"
)

// The phases of a step (position.Phase).
const (
	// phaseNotify: the step's notifications are to be sent.
	phaseNotify = "notify"
	// phaseWatch: they were sent; the step waits for an acknowledgement
	// and watches whether they were delivered.
	phaseWatch = "watch"
)

// position is how far through its policy an escalation is, stored as one
// JSON field that every change replaces as a whole (compare and set).
type position struct {
	// Round counts the times the steps were taken before this one.
	Round int `json:"r"`
	// Step indexes the policy's steps; len(Steps) is a re-notification
	// (repeat_interval), the Renotify-th.
	Step     int    `json:"s"`
	Renotify int    `json:"rn,omitempty"`
	Phase    string `json:"p"`
	// Deadline is when the step's wait ends, unix µs (phaseWatch).
	Deadline int64 `json:"d,omitempty"`
	// Pending are the step's messages whose delivery is not known yet.
	Pending []pending `json:"w,omitempty"`
	// Reached counts the step's messages known delivered, Failed those
	// that failed (or had nobody to go to).
	Reached int `json:"ok,omitempty"`
	Failed  int `json:"f,omitempty"`
}

// pending is a message of a step, by its task id, and whom it went to;
// DM marks a direct message to a person (a user or on_call target).
type pending struct {
	Task  string `json:"t"`
	Label string `json:"l"`
	DM    bool   `json:"d,omitempty"`
}

// encode is the position's JSON.
func (p position) encode() string {
	b, _ := json.Marshal(p)
	return string(b)
}

// record is an escalation as its hash holds it.
type record struct {
	ID       string
	Policy   string
	Bot      string
	Route    string
	Incident string
	Alert    Subject
	Homes    []Home
	Fired    time.Time
	State    string
	Pos      position
	// rawPos is the position field as read, for the compare and set.
	rawPos string
}

// fields are the hash fields Start writes.
func (s Start) fields() (map[string]string, error) {
	alert, err := json.Marshal(s.Alert)
	if err != nil {
		return nil, err
	}
	homes, err := json.Marshal(s.Homes)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"v": "1", "policy": s.Policy, "bot": s.Bot, "route": s.Route,
		"alert": string(alert), "homes": string(homes), "fired": strconv.FormatInt(s.FiredAt.UnixMicro(), 10),
	}, nil
}

// decodeRecord reads a record's hash; ok is false when there is none.
func decodeRecord(id string, m map[string]string) (record, bool, error) {
	if len(m) == 0 || m["state"] == "" {
		return record{}, false, nil
	}
	r := record{ID: id, Policy: m["policy"], Bot: m["bot"], Route: m["route"], Incident: m["incident"], State: m["state"], rawPos: m["pos"]}
	if err := json.Unmarshal([]byte(m["alert"]), &r.Alert); err != nil {
		return r, true, fmt.Errorf("escalation %s: alert: %w", id, err)
	}
	if err := json.Unmarshal([]byte(m["homes"]), &r.Homes); err != nil {
		return r, true, fmt.Errorf("escalation %s: homes: %w", id, err)
	}
	if err := json.Unmarshal([]byte(m["pos"]), &r.Pos); err != nil {
		return r, true, fmt.Errorf("escalation %s: position: %w", id, err)
	}
	if us, err := strconv.ParseInt(m["fired"], 10, 64); err == nil {
		r.Fired = time.UnixMicro(us)
	}
	return r, true, nil
}
