package reliability

import (
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
)

// Settings of the Telegram-fault scenario. The backoff is short so a
// six-second outage spans many retries of each task; the client timeout is
// short so a hung request costs half a second rather than fifteen.
const (
	rfBackoffBase = 200 * time.Millisecond
	rfBackoffCap  = 2 * time.Second
	rfTGTimeout   = 500 * time.Millisecond
	// rfOutage is the full outage in real time: 60 s of Telegram time at
	// timeScale 10.
	rfOutage = 6 * time.Second
	// rfFloodWait is the retry_after of the 429 storm in Telegram time (3 s
	// real at timeScale 10).
	rfFloodWait = 30 * time.Second
	// rfOutageTasks is how many tasks wait through the outage: one per chat,
	// so the per-chat limiter (10 sends/s at timeScale 10) cannot be what
	// keeps their retries apart; only the backoff can.
	rfOutageTasks = 20
	// rfMaxOutageAttempts bounds the mean requests per task during the
	// outage. With full jitter the waits after the first four failures are
	// uniform in [100ms, 2s] (mean 1.05 s) and the first four average
	// 1.7 s together, so a task makes about 4 + 4.3/1.05 ≈ 8 attempts in
	// 6 s; a loop without backoff, held only by the per-chat limiter, would
	// make about 60. The bound leaves twice the expected figure.
	rfMaxOutageAttempts = 16
	// rfMaxRequestsPerDelivered bounds Bot API requests per delivered
	// message over the whole run: 12% random faults add about 0.14, the
	// outage at most 20×16/300 ≈ 1.07 and the 429 storm at most a few per
	// chat (20×3/300 = 0.2), so a run without a retry loop stays below
	// 1 + 0.14 + 1.07 + 0.2 ≈ 2.4.
	rfMaxRequestsPerDelivered = 3.0
	// rfMaxFlood429PerChat bounds the 429s the storm costs each chat: the
	// first 429 pauses the chat (and, once enough chats saw one, the whole
	// bot) for retry_after, so only requests already on the wire when the
	// pause was recorded can meet the storm again.
	rfMaxFlood429PerChat = 3
)

// rfTelegramRun is what the Telegram-fault scenario measured.
type rfTelegramRun struct {
	Sent           int     // messages accepted by the API
	Delivered      int     // distinct messages the fake accepted
	Lost           int     // accepted but never delivered
	Duplicates     int     // deliveries beyond the first of a message
	Requests       int64   // Bot API requests the fake served
	PerDelivered   float64 // Requests / Delivered
	ServerErrors   int64   // 5xx answers (random faults and the outage)
	Hangs          int64   // requests held past the client timeout
	OutageRequests int64   // requests during the outage
	OutagePerTask  float64 // OutageRequests / rfOutageTasks
	Flood429       int64   // 429s answered during the storm
	FloodRecovery  time.Duration
	Archived       int
}

// TestTelegramFaultsDeliverEverything is scenario 3 of issue 7: 10% 5xx and
// 2% hangs throughout, a 60-second (Telegram time) full outage in the
// middle and then a 429 storm with a long retry_after. Every message must
// be delivered, none archived, none duplicated (hangs deliver nothing, so a
// retry after one is not a duplicate), and retries must be spaced by the
// backoff rather than loop.
func TestTelegramFaultsDeliverEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("Telegram-fault scenario skipped in -short mode")
	}
	t.Parallel()
	const chats = 20
	s := newStack(t, stackOptions{Workers: 2, Timeout: 2 * time.Minute, WorkerEnv: []string{
		"HERALD_BACKOFF_BASE=" + rfBackoffBase.String(),
		"HERALD_BACKOFF_CAP=" + rfBackoffCap.String(),
		"TELEGRAM_TIMEOUT=" + rfTGTimeout.String(),
	}})
	s.fake.SetFaultRates(telegramfake.FaultRates{ServerError: 0.10, Hang: 0.02, Seed: 1})
	all := burst("tg-faults", 300, chats)
	before, outage, storm := all[:140], all[140:140+rfOutageTasks], all[140+rfOutageTasks:]
	run := rfTelegramRun{}

	// Random faults only.
	if _, err := s.fleet.PostAll(s.ctx, before, 16); err != nil {
		t.Fatal(err)
	}
	s.waitDelivered(t, before)

	// A full outage with one task per chat waiting through it.
	s.fake.SetOutage(true)
	reqsBefore := s.fake.Stats().Requests
	if _, err := s.fleet.PostAll(s.ctx, outage, 16); err != nil {
		t.Fatal(err)
	}
	// The outage lasts a fixed time by design; nothing is being awaited.
	select {
	case <-time.After(rfOutage):
	case <-s.ctx.Done():
		t.Fatal(s.ctx.Err())
	}
	run.OutageRequests = s.fake.Stats().Requests - reqsBefore
	s.fake.SetOutage(false)
	s.waitDelivered(t, append(append([]fleet.Message{}, before...), outage...))

	// A 429 storm: every request refused until retry_after has passed.
	floodBefore := s.fake.Stats().TooManyFlood
	s.fake.Force429(rfFloodWait)
	floodStart := time.Now()
	if _, err := s.fleet.PostAll(s.ctx, storm, 16); err != nil {
		t.Fatal(err)
	}
	s.waitDelivered(t, all)
	s.waitDrained(t)
	st := s.fake.Stats()
	run.Flood429 = st.TooManyFlood - floodBefore

	// Tally.
	seen := map[string]int{}
	for _, d := range s.fake.Messages() {
		seen[d.Text]++
		if run.FloodRecovery == 0 && d.At.After(floodStart) {
			run.FloodRecovery = d.At.Sub(floodStart)
		}
	}
	run.Sent = len(all)
	for _, m := range all {
		if n := seen[m.Text]; n == 0 {
			run.Lost++
		} else {
			run.Delivered++
			run.Duplicates += n - 1
		}
	}
	run.Requests, run.ServerErrors, run.Hangs = st.Requests, st.ServerErrors, st.Hangs
	run.PerDelivered = float64(run.Requests) / float64(max(run.Delivered, 1))
	run.OutagePerTask = float64(run.OutageRequests) / rfOutageTasks
	run.Archived = s.counts().Archived

	if run.Lost != 0 || run.Archived != 0 {
		t.Errorf("lost=%d archived=%d, want 0/0", run.Lost, run.Archived)
	}
	if run.Duplicates != 0 {
		t.Errorf("duplicates=%d, want 0: hangs deliver nothing, so no retry may duplicate", run.Duplicates)
	}
	if run.Hangs == 0 || run.ServerErrors == 0 || run.OutageRequests == 0 || run.Flood429 == 0 {
		t.Errorf("faults not exercised: hangs=%d 5xx=%d outage requests=%d flood 429s=%d",
			run.Hangs, run.ServerErrors, run.OutageRequests, run.Flood429)
	}
	if run.OutagePerTask > rfMaxOutageAttempts {
		t.Errorf("%.1f requests per task during the outage, want at most %d: retries are not backing off",
			run.OutagePerTask, rfMaxOutageAttempts)
	}
	if run.PerDelivered >= rfMaxRequestsPerDelivered {
		t.Errorf("%.2f Bot API requests per delivered message, want below %.1f", run.PerDelivered, rfMaxRequestsPerDelivered)
	}
	if run.Flood429 > chats*rfMaxFlood429PerChat {
		t.Errorf("%d 429s during the storm, want at most %d (%d per chat): a 429 must pause the chat",
			run.Flood429, chats*rfMaxFlood429PerChat, rfMaxFlood429PerChat)
	}
	t.Logf("telegram-faults: sent=%d delivered=%d lost=%d duplicates=%d archived=%d requests=%d per_delivered=%.2f 5xx=%d hangs=%d outage_requests=%d outage_per_task=%.1f flood_429=%d flood_recovery=%v",
		run.Sent, run.Delivered, run.Lost, run.Duplicates, run.Archived, run.Requests, run.PerDelivered,
		run.ServerErrors, run.Hangs, run.OutageRequests, run.OutagePerTask, run.Flood429,
		run.FloodRecovery.Round(time.Millisecond))
}
