package statushook

import (
	"encoding/json"
	"fmt"
	"net/url"
	"time"
)

// TaskType is the asynq task type of one event on its way to one
// endpoint.
const TaskType = "herald:status_callback"

// Queue is the asynq queue of the callbacks: a queue of their own, served
// by the workers' deliverers alone, so that a slow or dead receiver never
// holds a Telegram send.
const Queue = "callbacks"

// jobVersion is the version of job's JSON.
const jobVersion = 1

// job is a callback task's payload: where to post, and the event exactly
// as it is posted (signed and sent byte for byte on every attempt).
type job struct {
	V    int    `json:"v"`
	URL  string `json:"url"`
	ID   string `json:"id"`
	Type string `json:"type"`
	// At is when the event happened, for the latency metric.
	At   time.Time       `json:"at"`
	Body json.RawMessage `json:"body"`
}

// decodeJob reads a callback task's payload.
func decodeJob(payload []byte) (job, error) {
	var j job
	if err := json.Unmarshal(payload, &j); err != nil {
		return job{}, fmt.Errorf("callback payload: %w", err)
	}
	switch {
	case j.V != jobVersion:
		return job{}, fmt.Errorf("callback payload version %d, this worker reads %d", j.V, jobVersion)
	case j.URL == "" || j.ID == "" || len(j.Body) == 0:
		return job{}, fmt.Errorf("callback payload lacks its url, id or body")
	}
	return j, nil
}

// ShowPayload renders a callback task's payload for the web UI, indented,
// with the URL's query and fragment cut off: a receiver's URL may carry
// its own token there, and the UI shows payloads to every token holder.
// A payload that does not parse is shown as it is.
func ShowPayload(payload []byte) string {
	var j job
	if err := json.Unmarshal(payload, &j); err != nil {
		return string(payload)
	}
	if u, err := url.Parse(j.URL); err == nil {
		if u.RawQuery != "" || u.Fragment != "" {
			j.URL = endpointOf(u) + "?…"
		}
	}
	out, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return string(payload)
	}
	return string(out)
}
