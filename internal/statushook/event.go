package statushook

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The event types a callback carries, full-stop delimited as the Standard
// Webhooks specification recommends.
const (
	TypeMessageSent      = "message.sent"
	TypeMessageFailed    = "message.failed"
	TypeMessageSilenced  = "message.silenced"
	TypeMessageCoalesced = "message.coalesced"
	TypeChatBlocked      = "chat.blocked"
)

// knownTypes is the set Event.Validate accepts.
var knownTypes = map[string]bool{
	TypeMessageSent: true, TypeMessageFailed: true, TypeMessageSilenced: true,
	TypeMessageCoalesced: true, TypeChatBlocked: true,
}

// Event is one status callback's payload, in the shape the Standard
// Webhooks specification recommends:
//
//	{"type": "message.sent", "timestamp": "2026-01-02T03:04:05.678Z", "data": {...}}
//
// Timestamp is when the event happened (a Telegram send, an archive), not
// when it is delivered: it stays the same across retries, while the
// webhook-timestamp header is the attempt's time.
type Event struct {
	// ID is the webhook-id of the event, the same on every attempt and
	// for every emitter of the event, so that the receiver can drop a
	// repeat: build it with EventID. It is not part of the body. It must
	// not contain a '.' or whitespace.
	ID string
	// Type is one of the Type constants.
	Type string
	// Timestamp is when the event happened; it is rendered in UTC, RFC 3339
	// with the fraction of a second when there is one.
	Timestamp time.Time
	// Data is the event's content, rendered as a JSON object; nil renders
	// as {}.
	Data any
}

// wireEvent is Event's JSON form.
type wireEvent struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      any    `json:"data"`
}

// Validate reports why an event cannot be sent: an unknown type or a zero
// timestamp.
func (e Event) Validate() error {
	if !knownTypes[e.Type] {
		return fmt.Errorf("event type %q is not one of message.sent, message.failed, "+
			"message.silenced, message.coalesced, chat.blocked", e.Type)
	}
	if e.Timestamp.IsZero() {
		return fmt.Errorf("event %s has no timestamp", e.Type)
	}
	return nil
}

// MarshalJSON renders the event as {"type", "timestamp", "data"}, after
// Validate; data must encode as a JSON object.
func (e Event) MarshalJSON() ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	data, err := json.Marshal(e.Data)
	if err != nil {
		return nil, fmt.Errorf("event %s: encoding data: %w", e.Type, err)
	}
	switch {
	case string(data) == "null":
		data = []byte("{}")
	case len(data) == 0 || data[0] != '{':
		return nil, fmt.Errorf("event %s: data must be a JSON object, not %.20s", e.Type, data)
	}
	return json.Marshal(wireEvent{
		Type:      e.Type,
		Timestamp: e.Timestamp.UTC().Format(time.RFC3339Nano),
		Data:      json.RawMessage(data),
	})
}

// EventID is the webhook-id of an event about one subject: "msg_",
// the subject (a message's task id; for chat.blocked, the bot and the
// chat), "_" and the type with its '.' written '_', so that
// EventID("0c61…", "message.sent") is "msg_0c61…_message_sent". Every
// '.' or blank of the subject becomes '_' too, as a webhook-id may not
// contain them.
func EventID(subject, typ string) string {
	clean := strings.NewReplacer(".", "_", " ", "_", "\t", "_", "\r", "_", "\n", "_")
	return "msg_" + clean.Replace(subject) + "_" + clean.Replace(typ)
}
