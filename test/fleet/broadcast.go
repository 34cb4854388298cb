package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/herald-dev/herald/internal/telegramfake"
)

// PostBroadcasts posts ms as broadcasts (POST /v1/broadcasts), the way a
// product bot sends one announcement to many chats: in rounds, each holding
// every chat that has a message left once, in the order the messages come.
// Every message keeps its own text through the template's per-chat values,
// so Tally still tells each delivery apart. The messages must be of one bot
// (Message.Bot) and plain: no queue or coalescing of their own. It returns
// when the first broadcast was posted.
func (f *Fleet) PostBroadcasts(ctx context.Context, ms []Message) (time.Time, error) {
	var rounds [][]Message
	seen := map[string]int{} // chat → its messages so far
	for _, m := range ms {
		if m.Queue != "" || m.Coalesce {
			return time.Time{}, fmt.Errorf("fleet: a broadcast's message has no queue or coalescing of its own (%q)", m.Text)
		}
		r := seen[m.Chat]
		seen[m.Chat]++
		if r == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[r] = append(rounds[r], m)
	}
	start := time.Now()
	for _, round := range rounds {
		chats := make([]string, len(round))
		values := make(map[string]map[string]string, len(round))
		for i, m := range round {
			chats[i] = m.Chat
			values[m.Chat] = map[string]string{"text": m.Text}
		}
		body := map[string]any{"chats": chats, "text": "{{text}}", "values": values}
		if round[0].Bot != "" {
			body["bot"] = round[0].Bot
		}
		if err := f.postBroadcast(ctx, body); err != nil {
			return start, err
		}
	}
	return start, nil
}

func (f *Fleet) postBroadcast(ctx context.Context, body map[string]any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.APIBase+"/v1/broadcasts", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.APIToken)
	resp, err := apiClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("POST /v1/broadcasts: %s: %s", resp.Status, out)
	}
	return nil
}

// DeliverBroadcasts is Deliver with the messages posted as broadcasts
// (PostBroadcasts): drain counts from the first POST.
func (f *Fleet) DeliverBroadcasts(ctx context.Context, fake *telegramfake.Server, ms []Message) (Outcome, error) {
	base, have := fake.Stats(), len(fake.Messages())
	start, err := f.PostBroadcasts(ctx, ms)
	if err != nil {
		return Outcome{}, err
	}
	if err := waitFor(ctx, fake, have+len(ms)); err != nil {
		return Outcome{}, err
	}
	return Tally(ms, fake.Messages(), StatsSince(fake.Stats(), base), start), nil
}
