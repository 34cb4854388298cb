package amsilence

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Matcher is one equality matcher of a silence.
type Matcher struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Silence is what Create asks Alertmanager for.
type Silence struct {
	Matchers  []Matcher
	StartsAt  time.Time
	EndsAt    time.Time
	CreatedBy string
	// Comment should name what made the silence uniquely (a press's id):
	// Find looks it up by it.
	Comment string
}

// Client talks to Alertmanagers. The zero Client uses an http.Client with
// a 10 s timeout.
type Client struct {
	HTTP *http.Client
}

// maxAnswer bounds what is read of an Alertmanager's answer.
const maxAnswer = 1 << 20

func (c *Client) http() *http.Client {
	if c != nil && c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// postableSilence is API v2's body of POST /api/v2/silences.
type postableSilence struct {
	Matchers  []apiMatcher `json:"matchers"`
	StartsAt  time.Time    `json:"startsAt"`
	EndsAt    time.Time    `json:"endsAt"`
	CreatedBy string       `json:"createdBy"`
	Comment   string       `json:"comment"`
}

type apiMatcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"isRegex"`
	IsEqual bool   `json:"isEqual"`
}

// Create creates s in the Alertmanager at base (its external URL, such as
// http://alertmanager:9093) and returns the silence's id.
func (c *Client) Create(ctx context.Context, base string, s Silence) (string, error) {
	body := postableSilence{StartsAt: s.StartsAt.UTC(), EndsAt: s.EndsAt.UTC(), CreatedBy: s.CreatedBy, Comment: s.Comment}
	for _, m := range s.Matchers {
		body.Matchers = append(body.Matchers, apiMatcher{Name: m.Name, Value: m.Value, IsEqual: true})
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	var out struct {
		SilenceID string `json:"silenceID"`
	}
	if err := c.do(ctx, http.MethodPost, endpoint(base), raw, &out); err != nil {
		return "", err
	}
	if out.SilenceID == "" {
		return "", fmt.Errorf("amsilence: %s answered without a silenceID", endpoint(base))
	}
	return out.SilenceID, nil
}

// Find returns the id of the active or pending silence whose comment is
// comment; "" when there is none.
func (c *Client) Find(ctx context.Context, base, comment string) (string, error) {
	var list []struct {
		ID      string `json:"id"`
		Comment string `json:"comment"`
		Status  struct {
			State string `json:"state"`
		} `json:"status"`
	}
	if err := c.do(ctx, http.MethodGet, endpoint(base), nil, &list); err != nil {
		return "", err
	}
	for _, s := range list {
		if s.Comment == comment && s.Status.State != "expired" {
			return s.ID, nil
		}
	}
	return "", nil
}

// endpoint is the silences endpoint of the Alertmanager at base.
func endpoint(base string) string { return strings.TrimRight(base, "/") + "/api/v2/silences" }

// do sends one request and decodes a 200's JSON answer into out. An error
// names the URL (its password redacted) and the status, and no more than
// 200 bytes of the answer's body.
func (c *Client) do(ctx context.Context, method, target string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("amsilence: %w", err)
	}
	// Errors show the URL without a password it may carry.
	url := req.URL.Redacted()
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("amsilence: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("amsilence: %s %s: %w", method, url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("amsilence: %s %s: %s: %s", method, url, resp.Status, strings.TrimSpace(string(raw[:min(len(raw), 200)])))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("amsilence: %s %s: answer not understood: %w", method, url, err)
	}
	return nil
}
