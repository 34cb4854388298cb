package digest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/jobs"
)

// TypeDigest is the asynq task type of a digest: the items one group held
// when asynq aggregated it.
const TypeDigest = "telegram:digest"

// payloadVersion is the digest payload version this build writes.
const payloadVersion = 1

// TaskTimeout bounds one attempt at a digest task. The handler only talks to
// Redis, so this is generous.
const TaskTimeout = time.Minute

// ErrInvalidPayload marks a payload that no retry can make readable: the
// task is archived with it (its payload stays visible in the web UI).
var ErrInvalidPayload = errors.New("invalid payload")

// payload is the JSON payload of a TypeDigest task.
type payload struct {
	// V is the payload version.
	V int `json:"v"`
	// Group is the asynq group the items came from (the destination).
	Group string `json:"group"`
	// Items holds each grouped task's payload as it was stored: a
	// jobs.CoalescedItem object, or an unreadable object for a task that
	// was not a readable digest item.
	Items []json.RawMessage `json:"items"`
}

// unreadable wraps a grouped task whose payload is not a JSON object of a
// digest item, so that the digest payload stays valid JSON. The digest
// handler enqueues it again on its own (type and payload as they were), where
// it is sent or archived with a reason: it is never dropped.
type unreadable struct {
	// Type is the task's type.
	Type string `json:"unreadable_type"`
	// Raw is the task's payload as text (bytes that are not UTF-8 become
	// U+FFFD).
	Raw string `json:"raw"`
}

// Aggregate is the asynq GroupAggregator of digest groups. asynq calls it
// with the tasks of one group, and it can neither fail nor be retried, so it
// only bundles their payloads into one TypeDigest task; everything that can
// fail happens in the digest handler. The task carries Herald's retry
// ceiling and a timeout. It deliberately has no task id: asynq picks a fresh
// one, whereas a fixed id that already existed would make asynq aggregate
// the group again and again.
func Aggregate(group string, tasks []*asynq.Task) *asynq.Task {
	p := payload{V: payloadVersion, Group: group, Items: make([]json.RawMessage, 0, len(tasks))}
	for _, t := range tasks {
		p.Items = append(p.Items, itemJSON(t.Type(), t.Payload()))
	}
	b, err := json.Marshal(p)
	if err != nil {
		// Every element is valid JSON, so this cannot happen; if it did,
		// wrapping every item keeps them all.
		for i, t := range tasks {
			p.Items[i] = unreadableJSON(t.Type(), t.Payload())
		}
		b, _ = json.Marshal(p)
	}
	return asynq.NewTask(TypeDigest, b, asynq.MaxRetry(broker.RetryCeiling), asynq.Timeout(TaskTimeout))
}

// itemJSON keeps a digest item's payload as it is, and wraps anything else.
func itemJSON(typ string, payload []byte) json.RawMessage {
	trimmed := bytes.TrimSpace(payload)
	if typ == jobs.TypeDigestItem && len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
		return json.RawMessage(trimmed)
	}
	return unreadableJSON(typ, payload)
}

func unreadableJSON(typ string, payload []byte) json.RawMessage {
	b, _ := json.Marshal(unreadable{Type: typ, Raw: string(payload)})
	return b
}

// entry is one element of a digest payload, decoded.
type entry struct {
	item jobs.CoalescedItem
	// bad is set when the element is not a usable item: typ and raw are
	// what to enqueue again on its own, err why it was refused.
	bad *unreadable
	err error
}

// decodePayload parses a digest payload. Only a payload that is not a
// digest at all is an error; unusable items come back marked bad.
func decodePayload(b []byte) ([]entry, error) {
	var p payload
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%w: not a digest JSON object: %v", ErrInvalidPayload, err)
	}
	if p.V > payloadVersion {
		return nil, fmt.Errorf("%w: digest payload version %d is not supported by this build (max %d): upgrade the worker",
			ErrInvalidPayload, p.V, payloadVersion)
	}
	entries := make([]entry, 0, len(p.Items))
	for _, raw := range p.Items {
		var u struct {
			Type *string `json:"unreadable_type"`
			Raw  string  `json:"raw"`
		}
		if json.Unmarshal(raw, &u) == nil && u.Type != nil {
			entries = append(entries, entry{bad: &unreadable{Type: *u.Type, Raw: u.Raw},
				err: fmt.Errorf("grouped task of type %q is not a readable digest item", *u.Type)})
			continue
		}
		it, err := jobs.DecodeItem(raw)
		if err != nil {
			entries = append(entries, entry{bad: &unreadable{Type: jobs.TypeDigestItem, Raw: string(raw)}, err: err})
			continue
		}
		entries = append(entries, entry{item: it})
	}
	return entries, nil
}
