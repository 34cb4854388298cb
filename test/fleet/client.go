package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxPosters is the most clients any caller posts with at once (PostAll's
// parallel: 32 in the scenarios and the bench), with room to spare.
const maxPosters = 64

// apiClient posts to the producer. Go's default transport keeps two idle
// connections per host: with 32 clients posting, every other POST would
// open a new TCP connection, and the producer's CPU per POST would be
// partly a handshake's. This one keeps one idle connection per client.
// The producer listens on loopback, so no proxy is asked.
var apiClient = &http.Client{Transport: apiTransport()}

func apiTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.MaxIdleConns = maxPosters
	t.MaxIdleConnsPerHost = maxPosters
	return t
}

// Post sends one message through the producer API and returns the task id.
func (f *Fleet) Post(ctx context.Context, body map[string]any) (string, int, error) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.APIBase+"/v1/messages", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.APIToken)
	resp, err := apiClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return "", resp.StatusCode, fmt.Errorf("POST /v1/messages: %s: %s", resp.Status, out)
	}
	var r struct {
		TaskID string `json:"task_id"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return "", resp.StatusCode, err
	}
	return r.TaskID, resp.StatusCode, nil
}
