package telegramfake

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRemoteControlsAndReads(t *testing.T) {
	t.Parallel()
	s := startFake(t, Config{Bot: unlimited, Private: unlimited, Group: unlimited})
	rm := Remote{URL: s.URL()}
	ctx := context.Background()
	post := func(chat, txt string) int {
		t.Helper()
		resp, _, err := postHTTP(ctx, s, "sendMessage", text(chat, txt))
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}

	for _, txt := range []string{"a", "b", "c"} {
		if code := post("42", txt); code != 200 {
			t.Fatalf("send %s: %d", txt, code)
		}
	}
	rep, err := rm.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Messages != 3 || rep.Accepted != 3 || rep.Requests != 3 {
		t.Errorf("stats report %+v", rep)
	}
	msgs, err := rm.Messages(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Text != "b" || msgs[1].MessageID != 3 || msgs[0].At.IsZero() {
		t.Errorf("messages since 1: %+v", msgs)
	}
	if msgs, err := rm.Messages(ctx, 10); err != nil || len(msgs) != 0 {
		t.Errorf("messages past the end: %v %v", msgs, err)
	}

	steps := []struct {
		name string
		act  func() error
		want int
	}{
		{"outage", func() error { return rm.SetOutage(ctx, true) }, http.StatusBadGateway},
		{"outage off", func() error { return rm.SetOutage(ctx, false) }, http.StatusOK},
		{"force429", func() error { return rm.Force429(ctx, time.Hour) }, http.StatusTooManyRequests},
		{"force429 off", func() error { return rm.Force429(ctx, 0) }, http.StatusOK},
		{"fail", func() error { return rm.FailNext(ctx, 1, FaultServerError) }, http.StatusInternalServerError},
		{"fault rates", func() error { return rm.SetFaultRates(ctx, FaultRates{ServerError: 1, Seed: 3}) }, 0},
		{"fault rates off", func() error { return rm.SetFaultRates(ctx, FaultRates{}) }, http.StatusOK},
		{"chat", func() error { return rm.SetChat(ctx, "42", ChatBehavior{Kicked: true}) }, http.StatusForbidden},
		{"migrate", func() error { return rm.SetChat(ctx, "42", ChatBehavior{MigrateTo: -100999}) }, http.StatusBadRequest},
		{"chat cleared", func() error { return rm.SetChat(ctx, "42", ChatBehavior{}) }, http.StatusOK},
	}
	for _, st := range steps {
		if err := st.act(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		code := post("42", st.name)
		if st.want == 0 {
			if code < 500 {
				t.Errorf("%s: got %d, want a 5xx", st.name, code)
			}
			continue
		}
		if code != st.want {
			t.Errorf("%s: got %d, want %d", st.name, code, st.want)
		}
	}

	if err := rm.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if rep, err := rm.Stats(ctx); err != nil || rep.Messages != 0 || rep.Requests != 0 {
		t.Errorf("after reset: %+v %v", rep, err)
	}
}

func TestControlRejectsBadInput(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	h := s.Handler()
	for _, q := range []string{
		"/fake/outage?on=maybe",
		"/fake/force429?retry_after=soon",
		"/fake/fail?n=0&fault=hang",
		"/fake/fail?n=1&fault=meteor",
		"/fake/fault-rates?hang=lots",
		"/fake/fault-rates?seed=-1",
		"/fake/chat?chat=nobody",
		"/fake/chat?chat=42&migrate_to=x",
	} {
		r := serve(h, newPost(q))
		if r.code != http.StatusBadRequest || strings.TrimSpace(r.body) == "" {
			t.Errorf("POST %s: got %d %q, want 400 with a reason", q, r.code, r.body)
		}
	}
	if r := serve(h, newGet("/fake/messages?since=-1")); r.code != http.StatusBadRequest {
		t.Errorf("negative since: %d", r.code)
	}
	if r := serve(h, newGet("/fake/reset")); r.code != http.StatusNotFound || !strings.Contains(r.body, "POST") {
		t.Errorf("GET /fake/reset: %d %q, want 404 naming the method", r.code, r.body)
	}
	if got := s.Stats().Requests; got != 0 {
		t.Errorf("control requests counted as Bot API requests: %d", got)
	}
}

func newPost(target string) *http.Request { return httptest.NewRequest(http.MethodPost, target, nil) }

func newGet(target string) *http.Request { return httptest.NewRequest(http.MethodGet, target, nil) }

func TestRemoteReportsFailures(t *testing.T) {
	t.Parallel()
	s := startFake(t, Config{})
	rm := Remote{URL: s.URL(), Client: &http.Client{Timeout: 5 * time.Second}}
	if err := rm.FailNext(context.Background(), 0, FaultHang); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("FailNext(0): %v", err)
	}
	if err := (Remote{URL: "://bad"}).Reset(context.Background()); err == nil {
		t.Error("a bad URL gave no error")
	}
}
