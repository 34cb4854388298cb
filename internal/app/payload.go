package app

import (
	"bytes"
	"encoding/json"

	"github.com/hibiken/asynqmon"

	"github.com/herald-dev/herald/internal/digest"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/statushook"
)

// PayloadFormatter shows Herald's JSON payloads (messages, digest items,
// digests and status callbacks) as indented JSON in the web UI. Payloads
// hold no secrets (the bot token is never part of a task); a callback URL,
// a callback task's or a message's, is shown without its query, which may
// hold the receiver's token.
var PayloadFormatter = asynqmon.PayloadFormatterFunc(func(taskType string, payload []byte) string {
	switch taskType {
	case statushook.TaskType:
		return statushook.ShowPayload(payload)
	case jobs.TypeSendMessage, jobs.TypeDigestItem, digest.TypeDigest:
		if bytes.Contains(payload, []byte(`"callback_url"`)) {
			if shown, ok := hideCallbackQueries(payload); ok {
				return shown
			}
		}
		var out bytes.Buffer
		if json.Indent(&out, payload, "", "  ") == nil {
			return out.String()
		}
	}
	return string(payload)
})

// hideCallbackQueries renders a message payload indented with the query of
// every callback_url in it hidden (statushook.ShowURL), wherever it is
// nested (a digest's items).
func hideCallbackQueries(payload []byte) (string, bool) {
	var v any
	if json.Unmarshal(payload, &v) != nil {
		return "", false
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "callback_url" {
					x[k] = statushook.ShowURL(s)
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	out, err := json.MarshalIndent(v, "", "  ")
	return string(out), err == nil
}
