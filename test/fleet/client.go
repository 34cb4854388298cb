package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Post sends one message through the producer API and returns the task id.
func (f *Fleet) Post(ctx context.Context, body map[string]any) (string, int, error) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.APIBase+"/v1/messages", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.APIToken)
	resp, err := http.DefaultClient.Do(req)
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
