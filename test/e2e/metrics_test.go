package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
)

// The chats of the metrics test: distinctive ids, so that finding one in a
// label value cannot be a coincidence.
const (
	chatBlocked  = "7310666"
	chatTooMany  = "7310777"
	chatMarkup   = "7310888"
	chatGroup    = "-1007310555"
	metricsQueue = "critical"
	markupText   = "<b>disk</b> almost full"
)

var metricsChats = []string{"7310001", "7310002", "7310003", "7310004", chatGroup}

// TestMetricsMatchWhatTelegramRecorded runs a producer and two workers
// against the fake, with a blocked chat, an injected 429 and a markup error
// Telegram rejects, then checks every worker's and the producer's /metrics
// against what the fake recorded.
func TestMetricsMatchWhatTelegramRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	var workerMetrics []string
	for i := 0; i < 2; i++ {
		p, err := b.fleet.StartWorker(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		workerMetrics = append(workerMetrics, "http://"+listenAddr(t, p.Log)+"/metrics")
	}

	// Phase 1: a burst over several chats and two queues, with one message
	// to a chat that blocked the bot.
	b.fake.SetChat(chatBlocked, telegramfake.ChatBehavior{Blocked: true})
	var burst []fleet.Message
	wantByQueue := map[string]int{}
	for i := 0; i < 24; i++ {
		q := "default"
		if i%3 == 0 {
			q = metricsQueue
		}
		wantByQueue[q]++
		burst = append(burst, fleet.Message{Chat: metricsChats[i%len(metricsChats)], Text: fmt.Sprintf("metrics #%d", i), Queue: q})
	}
	burst = append(burst, fleet.Message{Chat: chatBlocked, Text: "to a chat that blocked the bot", Queue: "low"})
	if _, err := b.fleet.PostAll(b.ctx, burst, 8); err != nil {
		t.Fatal(err)
	}
	delivered := len(burst) - 1
	if err := b.fake.Wait(b.ctx, delivered); err != nil {
		t.Fatal(err)
	}
	b.waitIdle(t, 1)

	// Phase 2: Telegram answers the next request 429 once. Nothing else is
	// in flight, so the fault hits this message.
	b.fake.FailNext(1, telegramfake.FaultTooMany)
	if _, _, err := b.fleet.Post(b.ctx, map[string]any{"chat": chatTooMany, "text": "after a 429"}); err != nil {
		t.Fatal(err)
	}
	delivered++
	wantByQueue["default"]++
	if err := b.fake.Wait(b.ctx, delivered); err != nil {
		t.Fatal(err)
	}
	b.waitIdle(t, 1)

	// Phase 3: Telegram rejects the markup of the next message; Herald
	// resends it as plain text.
	b.fake.FailNext(1, telegramfake.FaultParseEntities)
	if _, _, err := b.fleet.Post(b.ctx, map[string]any{"chat": chatMarkup, "text": markupText, "parse_mode": "HTML"}); err != nil {
		t.Fatal(err)
	}
	delivered++
	wantByQueue["default"]++
	if err := b.fake.Wait(b.ctx, delivered); err != nil {
		t.Fatal(err)
	}
	b.waitIdle(t, 1)

	msgs, stats := b.fake.Messages(), b.fake.Stats()
	if len(msgs) != delivered {
		t.Fatalf("fake accepted %d messages, want %d", len(msgs), delivered)
	}
	if stats.TooMany < 1 {
		t.Fatalf("fake answered %d 429s, want at least the injected one", stats.TooMany)
	}
	// The downgrade sends the raw text without a parse mode.
	if last := msgs[len(msgs)-1]; last.ParseMode != "" || last.Text != markupText {
		t.Fatalf("downgraded message arrived as %q with parse mode %q, want %q without one", last.Text, last.ParseMode, markupText)
	}

	var workers []map[string]*dto.MetricFamily
	for _, u := range workerMetrics {
		workers = append(workers, scrape(t, b.ctx, u))
	}
	producer := scrape(t, b.ctx, b.fleet.APIBase+"/metrics")

	// Every series of every worker is summed: the fleet is what counts.
	sum := func(name string, labels map[string]string) float64 {
		var total float64
		for _, fams := range workers {
			total += value(fams, name, labels)
		}
		return total
	}
	checks := []struct {
		what      string
		got, want float64
	}{
		{"herald_messages_sent_total (all)", sum("herald_messages_sent_total", nil), float64(len(msgs))},
		{"herald_messages_sent_total{queue=critical}", sum("herald_messages_sent_total", map[string]string{"queue": metricsQueue}), float64(wantByQueue[metricsQueue])},
		{"herald_messages_sent_total{queue=default}", sum("herald_messages_sent_total", map[string]string{"queue": "default"}), float64(wantByQueue["default"])},
		{"herald_messages_sent_total{outcome=downgraded}", sum("herald_messages_sent_total", map[string]string{"outcome": "downgraded"}), 1},
		{"herald_telegram_429_total", sum("herald_telegram_429_total", nil), float64(stats.TooMany)},
		{"herald_archived_total{reason=chat_blocked}", sum("herald_archived_total", map[string]string{"reason": "chat_blocked"}), 1},
		{"herald_archived_total (all)", sum("herald_archived_total", nil), 1},
		// Every text is one part, so each accepted message is a first part.
		{"herald_delivery_latency_seconds count", sum("herald_delivery_latency_seconds", nil), float64(len(msgs))},
		{"herald_possible_duplicates_total", sum("herald_possible_duplicates_total", nil), 0},
		// Producer: asynq's view of the queues once everything is done.
		{"asynq_queue_size{queue=low}", value(producer, "asynq_queue_size", map[string]string{"queue": "low"}), 1},
		{"asynq_queue_size{queue=default}", value(producer, "asynq_queue_size", map[string]string{"queue": "default"}), 0},
		{"asynq_tasks_enqueued_total{queue=low,state=archived}", value(producer, "asynq_tasks_enqueued_total", map[string]string{"queue": "low", "state": "archived"}), 1},
		{"asynq_tasks_enqueued_total{state=pending}", value(producer, "asynq_tasks_enqueued_total", map[string]string{"state": "pending"}), 0},
		{"asynq_queue_latency_seconds", value(producer, "asynq_queue_latency_seconds", nil), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	t.Logf("fake: %d accepted, %d 429s, %d rejected; workers: %v sent, %v 429s, %v deferrals, %v retries",
		len(msgs), stats.TooMany, stats.Rejected, sum("herald_messages_sent_total", nil), sum("herald_telegram_429_total", nil),
		sum("herald_ratelimit_deferrals_total", nil), sum("herald_retries_total", nil))
	for _, name := range []string{"asynq_queue_size", "asynq_queue_latency_seconds", "asynq_queue_memory_usage_approx_bytes", "asynq_tasks_processed_total", "asynq_tasks_failed_total", "asynq_queue_paused_total"} {
		for _, q := range []string{"default", metricsQueue, "low"} {
			if !has(producer, name, map[string]string{"queue": q}) {
				t.Errorf("producer: no series %s{queue=%q}", name, q)
			}
		}
	}
	// asynq counts a handler run as processed when it ends in success, a
	// failure (a retry) or an archive; rate-limit deferrals do not count.
	// Each task ends once, so Redis's totals follow from the workers'.
	tasks, retries := float64(len(burst)+2), sum("herald_retries_total", nil)
	if got, want := value(producer, "asynq_tasks_processed_total", nil), tasks+retries; got != want {
		t.Errorf("asynq_tasks_processed_total = %v, want %v (%v tasks + %v retries)", got, want, tasks, retries)
	}
	if got, want := value(producer, "asynq_tasks_failed_total", nil), 1+retries; got != want {
		t.Errorf("asynq_tasks_failed_total = %v, want %v (1 archived + %v retries)", got, want, retries)
	}

	// Series known in advance exist before their first event.
	for i, fams := range workers {
		for _, want := range []struct {
			name   string
			labels map[string]string
		}{
			{"herald_retries_total", map[string]string{"reason": "server_error"}},
			{"herald_retries_total", map[string]string{"reason": "redis"}},
			{"herald_archived_total", map[string]string{"reason": "kicked"}},
			{"herald_archived_total", map[string]string{"reason": "invalid_payload"}},
			{"herald_messages_sent_total", map[string]string{"queue": "low", "outcome": "downgraded"}},
			{"herald_ratelimit_deferrals_total", map[string]string{"queue": "low"}},
			{"herald_build_info", nil},
		} {
			if !has(fams, want.name, want.labels) {
				t.Errorf("worker %d: no series %s%v", i+1, want.name, want.labels)
			}
		}
		if got := value(fams, "herald_build_info", nil); got != 1 {
			t.Errorf("worker %d: herald_build_info = %v, want 1", i+1, got)
		}
	}
	if got := value(producer, "herald_build_info", nil); got != 1 {
		t.Errorf("producer: herald_build_info = %v, want 1", got)
	}

	// No label may carry a secret or a chat id.
	_, secret, _ := strings.Cut(telegramfake.DefaultToken, ":")
	forbidden := append([]string{telegramfake.DefaultToken, secret, chatBlocked, chatTooMany, chatMarkup, strings.TrimPrefix(chatGroup, "-100")}, metricsChats...)
	all := append([]map[string]*dto.MetricFamily{producer}, workers...)
	for i, fams := range all {
		for name, fam := range fams {
			for _, m := range fam.GetMetric() {
				for _, lp := range m.GetLabel() {
					if strings.Contains(strings.ToLower(lp.GetName()), "chat") {
						t.Errorf("scrape %d: %s has a chat label %q", i, name, lp.GetName())
					}
					for _, f := range forbidden {
						if strings.Contains(lp.GetValue(), f) {
							t.Errorf("scrape %d: %s{%s=%q} contains %q", i, name, lp.GetName(), lp.GetValue(), f)
						}
					}
				}
			}
		}
	}
}

// waitIdle waits until no queue holds a pending, active, scheduled or retry
// task and exactly archived tasks are archived. The workers are other
// processes and Redis sends no signal when a task finishes, so this polls.
func (b *bundle) waitIdle(t *testing.T, archived int) {
	t.Helper()
	var last string
	for {
		queues, err := b.insp.Queues()
		if err != nil {
			t.Fatal(err)
		}
		busy, arch := 0, 0
		last = ""
		for _, q := range queues {
			info, err := b.insp.GetQueueInfo(q)
			if err != nil {
				t.Fatal(err)
			}
			busy += info.Pending + info.Active + info.Scheduled + info.Retry
			arch += info.Archived
			last += fmt.Sprintf(" %s: pending=%d active=%d scheduled=%d retry=%d archived=%d;",
				q, info.Pending, info.Active, info.Scheduled, info.Retry, info.Archived)
		}
		if busy == 0 && arch == archived {
			return
		}
		select {
		case <-b.ctx.Done():
			t.Fatalf("queues never became idle with %d archived:%s", archived, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// listenAddr reads the health/metrics address a ready worker logged.
func listenAddr(t *testing.T, logPath string) string {
	t.Helper()
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" && line.Addr != "" {
			return line.Addr
		}
	}
	t.Fatalf("no \"listening\" line with an addr in %s", logPath)
	return ""
}

// scrape fetches url and parses the Prometheus text format.
func scrape(t *testing.T, ctx context.Context, url string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// matching returns the metrics of family name whose labels include labels.
func matching(fams map[string]*dto.MetricFamily, name string, labels map[string]string) []*dto.Metric {
	var out []*dto.Metric
	fam, ok := fams[name]
	if !ok {
		return nil
	}
	for _, m := range fam.GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		ok := true
		for k, v := range labels {
			if have[k] != v {
				ok = false
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// has reports whether a series of name with labels exists.
func has(fams map[string]*dto.MetricFamily, name string, labels map[string]string) bool {
	return len(matching(fams, name, labels)) > 0
}

// value sums the matching series: counter and gauge values, histogram
// sample counts.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	var total float64
	for _, m := range matching(fams, name, labels) {
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		case m.Untyped != nil:
			total += m.GetUntyped().GetValue()
		}
	}
	return total
}
