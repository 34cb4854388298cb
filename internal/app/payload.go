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
// hold no secrets (the bot token is never part of a task); a callback's
// URL is shown without its query, which may hold the receiver's token.
var PayloadFormatter = asynqmon.PayloadFormatterFunc(func(taskType string, payload []byte) string {
	switch taskType {
	case statushook.TaskType:
		return statushook.ShowPayload(payload)
	case jobs.TypeSendMessage, jobs.TypeDigestItem, digest.TypeDigest:
		var out bytes.Buffer
		if json.Indent(&out, payload, "", "  ") == nil {
			return out.String()
		}
	}
	return string(payload)
})
