package ledger

import (
	"encoding/json"
	"strings"
	"time"
)

// Record is a settled message's entry as stored in Redis, in the bot's key
// space at keys.Space.Sent(task id). Its JSON names are short on purpose:
// Redis holds one per message for Config.Retention, and the API (Status)
// spells them out.
type Record struct {
	State State  `json:"s"`
	Chat  string `json:"c,omitempty"`
	// Username is the chat's public @username when the message named one
	// (Chat is then the numeric id the worker resolved, when it did): it
	// forms the message's t.me link.
	Username string `json:"u,omitempty"`
	Queue    string `json:"q,omitempty"`
	// From is the name of the token that sent the message ("" for messages
	// Herald made itself: alerts, heartbeats, feeds).
	From string `json:"f,omitempty"`
	// Attempts counts the attempts that ended in a failure before the
	// message settled.
	Attempts int `json:"n,omitempty"`
	// Created and Settled are Unix milliseconds.
	Created int64 `json:"t0,omitempty"`
	Settled int64 `json:"t,omitempty"`
	// MessageIDs are the Telegram message ids of the parts sent, in order.
	MessageIDs []int `json:"m,omitempty"`
	// Topic is the forum topic (message_thread_id) the message went to.
	Topic int `json:"tp,omitempty"`
	// Reason and Error say why a message failed: the stable reason
	// (telegram.Reason values, chat_blocked, ...) and the error as the web
	// UI shows it.
	Reason string `json:"r,omitempty"`
	Error  string `json:"e,omitempty"`
	// Silence is the id of the silence that caught an alert.
	Silence string `json:"si,omitempty"`
	// Digest is the task id of the digest that carried a coalesced message.
	Digest string `json:"d,omitempty"`
	// Progress is the worker's send record of a message that settled with
	// parts still unsent (failed, cancelled): a retry resumes from it
	// instead of sending the first parts again.
	Progress string `json:"p,omitempty"`
}

// maxError bounds the error text a record keeps.
const maxError = 300

// Encode is the record's stored form.
func (r Record) Encode() string {
	if len(r.Error) > maxError {
		r.Error = strings.ToValidUTF8(r.Error[:maxError], "") + "…"
	}
	b, _ := json.Marshal(r) // a struct of strings and numbers: cannot fail
	return string(b)
}

// Decode reads a stored value. It reports false for a value that is not a
// Record: a worker's send record of a message still on its way, or nothing.
func Decode(v string) (Record, bool) {
	var r Record
	if !strings.HasPrefix(v, "{") || json.Unmarshal([]byte(v), &r) != nil || r.State == "" {
		return Record{}, false
	}
	return r, true
}

// Millis is t in Unix milliseconds (0 for the zero time), as records keep
// times.
func Millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// timeOf is the time of a record's Unix milliseconds (nil for 0).
func timeOf(ms int64) *time.Time {
	if ms == 0 {
		return nil
	}
	t := time.UnixMilli(ms).UTC()
	return &t
}
