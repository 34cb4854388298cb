package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// request is one POST and what came of it.
type request struct {
	text       string
	sent, done time.Time
	code       int // 0: no answer (transport error or timeout)
	seen       time.Time
	deliveries int
	answered   bool
}

// traffic posts messages and watches the fake Bot API for them.
type traffic struct {
	api, token, fake string
	client           *http.Client
	run              string

	mu     sync.Mutex
	reqs   []*request
	byText map[string]*request
	extra  int // delivered texts this run did not send
}

func newTraffic(api, token, fake string) *traffic {
	return &traffic{api: api, token: token, fake: fake, client: &http.Client{Timeout: 5 * time.Second},
		run: fmt.Sprintf("fo%d", time.Now().Unix()), byText: map[string]*request{}}
}

// post sends one message every interval, each to a chat of its own so that
// no per-chat limit delays a delivery.
func (t *traffic) post(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for seq := 0; ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r := &request{text: fmt.Sprintf("%s-%d", t.run, seq), sent: time.Now()}
		t.mu.Lock()
		t.reqs = append(t.reqs, r)
		t.byText[r.text] = r
		t.mu.Unlock()
		go t.send(ctx, r, 800000+seq)
	}
}

func (t *traffic) send(ctx context.Context, r *request, chat int) {
	body, _ := json.Marshal(map[string]any{"chat": chat, "text": r.text})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.api+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+t.token)
	req.Header.Set("Content-Type", "application/json")
	code := 0
	if resp, err := t.client.Do(req); err == nil {
		code = resp.StatusCode
		resp.Body.Close()
	}
	t.mu.Lock()
	r.code, r.done, r.answered = code, time.Now(), true
	t.mu.Unlock()
}

// watch polls the fake's /fake/messages and records when each text arrived.
func (t *traffic) watch(ctx context.Context, every time.Duration) {
	since := 0
	for ctx.Err() == nil {
		var msgs []struct {
			Text string `json:"text"`
		}
		resp, err := t.client.Get(fmt.Sprintf("%s/fake/messages?since=%d", t.fake, since))
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&msgs)
			resp.Body.Close()
		}
		if err == nil {
			now := time.Now()
			t.mu.Lock()
			for _, m := range msgs {
				if r := t.byText[m.Text]; r != nil {
					if r.deliveries == 0 {
						r.seen = now
					}
					r.deliveries++
				} else {
					t.extra++
				}
			}
			t.mu.Unlock()
			since += len(msgs)
		}
		_ = sleep(ctx, every)
	}
}
