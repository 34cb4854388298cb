package app

import (
	"bytes"
	"encoding/json"

	"github.com/hibiken/asynqmon"

	"github.com/herald-dev/herald/internal/jobs"
)

// PayloadFormatter shows SendMessage payloads as indented JSON in the web UI.
// Payloads hold no secrets (the bot token is never part of a task).
var PayloadFormatter = asynqmon.PayloadFormatterFunc(func(taskType string, payload []byte) string {
	if taskType == jobs.TypeSendMessage {
		var out bytes.Buffer
		if json.Indent(&out, payload, "", "  ") == nil {
			return out.String()
		}
	}
	return string(payload)
})
