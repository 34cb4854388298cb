package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/fleet/fleettest"
)

// The escalation test runs every clock ten times faster than real time
// (scale, as the rest of the suite): the fake's Telegram and Herald's rate
// limits, and the policy's timers too, so that the Telegram limits weigh
// on the steps as they would at full speed. The worked example's "2 min"
// before the on-call DM is therefore 12 s here, its "4 min" before the
// secondary 24 s, and HERALD_ESCALATION_CHECK_INTERVAL is 100 ms for the
// default 1 s. "Telegram time" in the figures is real time × scale.
const (
	escWait1 = 2 * time.Minute / scale // step 1 → step 2
	escWait2 = 4 * time.Minute / scale // step 2 → step 3
	// escShards is how many group chats the alerts are spread over (one
	// route and one policy each, whose step 1 is that chat): one chat
	// would hold 500 messages to its 20 a minute.
	escShards = 20
	escAlerts = 100
	// escAckEvery: of every escAckEvery alerts, three are acknowledged
	// in their chat after step 1 and one from the on-call user's DM after
	// step 2 (see escAcked).
	escAckEvery = 10
	// escUnstarted alerts escalate to Dana, who never started the bot.
	escUnstarted = 5
	aliceID      = 1001 // on call in primary
	carolID      = 1003 // on call in secondary
	danaID       = 1004 // on call in nights; never started the bot
)

// escAcked says after which step alert i of the main 100 is acknowledged
// (0: never): three in ten in their chat after step 1, one in ten from
// the on-call user's DM after step 2.
func escAcked(i int) int {
	switch i % escAckEvery {
	case 0, 1, 2:
		return 1
	case 3:
		return 2
	}
	return 0
}

// escChat is the group chat of shard i.
func escChat(i int) int64 { return -1002000000000 - int64(i) }

// escNightsChat is the chat of the alerts that escalate to Dana.
const escNightsChat = -1002000000999

// escalationRoutes is the routing file: three schedules of one person
// each, a 3-step policy per shard (its chat, whoever is on call in
// primary, whoever is on call in secondary) and one whose step 2 goes to
// Dana, who never started the bot.
func escalationRoutes() string {
	var b strings.Builder
	b.WriteString("schedules:\n")
	for _, s := range []struct {
		name, user string
	}{{"primary", `{id: 1001, name: Alice, username: alice_oncall}`}, {"secondary", `{id: 1003, name: Carol}`}, {"nights", `{id: 1004, name: Dana}`}} {
		fmt.Fprintf(&b, "  - name: %s\n    time_zone: Europe/Berlin\n    layers:\n      - {users: [%s], shift: weekly, handoff: \"09:00\", start: 2026-01-05}\n", s.name, s.user)
	}
	policy := func(name string, chat int64, second string) {
		fmt.Fprintf(&b, "  - name: %s\n    steps:\n      - {notify: [{chat: \"%d\"}], wait: %s}\n      - {notify: [{on_call: %s}], wait: %s}\n      - {notify: [{on_call: secondary}]}\n",
			name, chat, escWait1, second, escWait2)
	}
	route := func(name, match, policy string, chat int64) {
		fmt.Fprintf(&b, "  - name: %s\n    match: {labels: %s}\n    escalation: %s\n    buttons: [ack]\n    destinations: [\"%d\"]\n", name, match, policy, chat)
	}
	b.WriteString("escalation_policies:\n")
	for i := range escShards {
		policy(fmt.Sprintf("db-%02d", i), escChat(i), "primary")
	}
	policy("nights", escNightsChat, "nights")
	b.WriteString("routes:\n")
	for i := range escShards {
		route(fmt.Sprintf("db-%02d", i), fmt.Sprintf(`{team: db, shard: "%d"}`, i), fmt.Sprintf("db-%02d", i), escChat(i))
	}
	route("nights", "{team: nights}", "nights", escNightsChat)
	return b.String()
}

// escAlert is one alert of the test and what the fake holds about it.
type escAlert struct {
	key, title string
	chat       int64
	acked      int  // acknowledged after this step (0: never)
	unstarted  bool // its step 2 goes to Dana
	posted     time.Time
}

// escFound is what the fake's records hold about one alert: its message,
// the notes replying to it (by step), the failure and end notes, and the
// DMs (by step).
type escFound struct {
	msg      telegramfake.Message
	notes    map[int][]telegramfake.Message
	failures []telegramfake.Message
	ended    []telegramfake.Message
	dms      map[int][]telegramfake.Message
}

// escIndex sorts the fake's records by alert. Anything it cannot place is
// returned in stray.
func escIndex(alerts []*escAlert, msgs []telegramfake.Message) (found map[string]*escFound, stray []telegramfake.Message) {
	found = map[string]*escFound{}
	byTitle := map[string]*escAlert{}
	for _, a := range alerts {
		byTitle[a.title] = a
		found[a.key] = &escFound{notes: map[int][]telegramfake.Message{}, dms: map[int][]telegramfake.Message{}}
	}
	type msgKey struct {
		chat int64
		id   int
	}
	home := map[msgKey]*escAlert{}
	for _, m := range msgs {
		if m.ReplyTo != nil || m.ChatID > 0 {
			continue
		}
		for _, a := range alerts {
			if a.chat == m.ChatID && strings.Contains(m.Text, "<b>"+a.title+"</b>") {
				found[a.key].msg = m
				home[msgKey{m.ChatID, m.MessageID}] = a
			}
		}
	}
	for _, m := range msgs {
		switch {
		case m.ChatID > 0:
			head, _, _ := strings.Cut(m.Text, "\n")
			a := byTitle[strings.TrimPrefix(head, "🚨 Escalated to you: ")]
			if a == nil || !strings.HasPrefix(head, "🚨 Escalated to you: ") {
				stray = append(stray, m)
				continue
			}
			step := stepOf(m.Text)
			found[a.key].dms[step] = append(found[a.key].dms[step], m)
		case m.ReplyTo == nil:
			if home[msgKey{m.ChatID, m.MessageID}] == nil {
				stray = append(stray, m)
			}
		default:
			a := home[msgKey{m.ChatID, m.ReplyTo.MessageID}]
			if a == nil {
				stray = append(stray, m)
				continue
			}
			f := found[a.key]
			switch {
			case strings.HasPrefix(m.Text, "↗️ "):
				f.notes[stepOf(m.Text)] = append(f.notes[stepOf(m.Text)], m)
			case strings.HasPrefix(m.Text, "⚠️ Could not reach"):
				f.failures = append(f.failures, m)
			case strings.HasPrefix(m.Text, "⏹ Escalation ended"):
				f.ended = append(f.ended, m)
			default:
				stray = append(stray, m)
			}
		}
	}
	return found, stray
}

// stepOf reads "step N of 3" from a note or DM; 0 when there is none.
func stepOf(text string) int {
	for n := 1; n <= 3; n++ {
		if strings.Contains(text, fmt.Sprintf("step %d of 3", n)) {
			return n
		}
	}
	return 0
}

// escFleet is the stack of the test: 3 workers reading the presses by
// getUpdates, and 2 producer processes with the routing file.
type escFleet struct {
	s     *fleettest.Stack
	env   []string
	procs []*fleet.Proc
	bases []string
}

// startProducer starts producer i (a name of its own each time) and
// stops it at cleanup.
func (f *escFleet) startProducer(t *testing.T, i int, name string) {
	t.Helper()
	p, base, err := f.s.Fleet.StartProducerProc(f.s.Ctx, name, f.env...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopProc(p) })
	f.procs[i], f.bases[i] = p, base
}

// stopProc stops p with SIGTERM, and SIGKILL after 15 s.
func stopProc(p *fleet.Proc) {
	_ = p.Signal(syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if p.Wait(ctx) != nil {
		p.Kill()
	}
}

// post sends every alert, half to each producer, and notes when each was
// taken.
func (f *escFleet) post(t *testing.T, alerts []*escAlert) {
	t.Helper()
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				a := alerts[i]
				labels := map[string]string{"team": "db", "shard": fmt.Sprint(i % escShards)}
				if a.unstarted {
					labels = map[string]string{"team": "nights"}
				}
				body, _ := json.Marshal(map[string]any{"title": a.title, "severity": "critical", "key": a.key, "labels": labels})
				code, out := call(t, f.s.Fleet, http.MethodPost, f.bases[i%2]+"/v1/alerts", body, nil)
				if code != http.StatusAccepted {
					t.Errorf("alert %s: %d %s", a.key, code, out)
				}
				a.posted = time.Now()
			}
		}()
	}
	for i := range alerts {
		work <- i
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

// TestEscalationAcrossAFleet is issue 30's fleet target: 100 critical
// alerts under a 3-step policy (the alert's chat, then the on-call user's
// DM after 2 min, then the secondary's after 4 min) through 2 producers
// and 3 workers. A worker is SIGKILLed
// while the step-2 DMs go out, and a producer restarts while step 3 is
// taken. From the fake's records: the unacknowledged alerts get every step
// once, those acknowledged nothing after the step they were acknowledged
// at: 30 in their chat after step 1, 10 from the on-call user's DM after
// step 2 (its Acknowledge button). Five more alerts go to
// Dana at step 2, who never started the bot: the thread shows why, and
// step 3 follows within seconds instead of 4 minutes.
func TestEscalationAcrossAFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	s := fleettest.Start(t, fleettest.Options{Workers: 3, NoProducer: true, Updates: true, Timeout: 4 * time.Minute,
		Fake: telegramfake.Config{TimeScale: scale}})
	s.Fake.SetChat(fmt.Sprint(danaID), telegramfake.ChatBehavior{NeverStarted: true})
	routes := filepath.Join(t.TempDir(), "routes.yaml")
	if err := os.WriteFile(routes, []byte(escalationRoutes()), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &escFleet{s: s, env: []string{"HERALD_ROUTES_FILE=" + routes, "HERALD_ESCALATION_CHECK_INTERVAL=" + (time.Second / scale).String()},
		procs: make([]*fleet.Proc, 2), bases: make([]string, 2)}
	f.startProducer(t, 0, "producer-1")
	f.startProducer(t, 1, "producer-2")

	var alerts []*escAlert
	for i := range escAlerts {
		alerts = append(alerts, &escAlert{key: fmt.Sprintf("e%03d", i), title: fmt.Sprintf("disk full e%03d", i), chat: escChat(i % escShards), acked: escAcked(i)})
	}
	for i := range escUnstarted {
		alerts = append(alerts, &escAlert{key: fmt.Sprintf("n%03d", i), title: fmt.Sprintf("disk full n%03d", i), chat: escNightsChat, unstarted: true})
	}
	f.post(t, alerts)
	acknowledge(t, s, alerts, 1)

	// A worker dies while the step-2 DMs go out, and another starts.
	waitFor(t, s.Ctx, "the first step-2 DM", func() bool { return countDMs(s.Fake.Messages(), aliceID, 2) > 0 })
	s.Fleet.Workers[0].Kill()
	if _, err := s.Fleet.StartWorker(s.Ctx); err != nil {
		t.Fatal(err)
	}
	acknowledge(t, s, alerts, 2)
	// A producer restarts while step 3 is taken.
	waitFor(t, s.Ctx, "the first step-3 DM of a main alert", func() bool { return countDMs(s.Fake.Messages(), carolID, 3) > escUnstarted })
	stopProc(f.procs[0])
	f.startProducer(t, 0, "producer-1-again")

	unacked := escUnstarted
	for _, a := range alerts {
		if a.acked == 0 && !a.unstarted {
			unacked++
		}
	}
	waitFor(t, s.Ctx, "every unacknowledged escalation to end", func() bool {
		return countPrefix(s.Fake.Messages(), "⏹ Escalation ended") >= unacked
	})
	waitIdle(t, s)
	checkEscalations(t, alerts, s.Fake.Messages())
}

// acknowledge presses Acknowledge for each alert to acknowledge after
// step (1: under its message, once the step-1 note is in its thread; 2:
// in the on-call user's DM of step 2, as Alice), and waits until every
// such alert's message shows the acknowledgement. Each must come before
// the alert's next step is due, or the test would prove nothing.
func acknowledge(t *testing.T, s *fleettest.Stack, alerts []*escAlert, step int) {
	t.Helper()
	by := map[int]telegramfake.User{1: {ID: 2001, FirstName: "Bob", Username: "bob_ops"},
		2: {ID: aliceID, FirstName: "Alice", Username: "alice_oncall"}}[step]
	pressed := map[string]bool{}
	var want []*escAlert
	for _, a := range alerts {
		if a.acked == step {
			want = append(want, a)
		}
	}
	waitFor(t, s.Ctx, fmt.Sprintf("every step-%d message of the alerts to acknowledge", step), func() bool {
		found, _ := escIndex(alerts, s.Fake.Messages())
		for _, a := range want {
			fd := found[a.key]
			on := fd.msg // the message whose button is pressed
			if step == 2 && len(fd.dms[2]) > 0 {
				on = fd.dms[2][0]
			}
			if pressed[a.key] || len(fd.notes[step]) == 0 || on.ReplyMarkup == nil || step == 2 && on.ChatID != aliceID {
				continue
			}
			data := on.ReplyMarkup.InlineKeyboard[0][0].CallbackData
			if _, err := s.Fake.Press("", on.ChatID, on.MessageID, by, data); err != nil {
				t.Fatalf("press for %s in chat %d: %v", a.key, on.ChatID, err)
			}
			pressed[a.key] = true
		}
		return len(pressed) == len(want)
	})
	line := "Acknowledged by @" + by.Username
	waitFor(t, s.Ctx, "the acknowledgements to show", func() bool {
		found, _ := escIndex(alerts, s.Fake.Messages())
		for _, a := range want {
			m, _ := s.Fake.Lookup(a.chat, found[a.key].msg.MessageID)
			if !strings.Contains(m.Current().Text, line) {
				return false
			}
		}
		return true
	})
	next := map[int]time.Duration{1: escWait1, 2: escWait1 + escWait2}[step]
	found, _ := escIndex(alerts, s.Fake.Messages())
	for _, a := range want {
		m, _ := s.Fake.Lookup(a.chat, found[a.key].msg.MessageID)
		if at := m.Current().At; at.After(a.posted.Add(next)) {
			t.Fatalf("%s was acknowledged %v after it was posted, after its step %d was due (%v): the test proves nothing",
				a.key, at.Sub(a.posted), step+1, next)
		}
	}
}

// countDMs counts the DMs to user whose text names the step.
func countDMs(msgs []telegramfake.Message, user int64, step int) int {
	n := 0
	for _, m := range msgs {
		if m.ChatID == user && strings.HasPrefix(m.Text, "🚨 Escalated to you: ") && stepOf(m.Text) == step {
			n++
		}
	}
	return n
}

// countPrefix counts the messages whose text starts with prefix.
func countPrefix(msgs []telegramfake.Message, prefix string) int {
	n := 0
	for _, m := range msgs {
		if strings.HasPrefix(m.Text, prefix) {
			n++
		}
	}
	return n
}

// waitIdle waits until no task is active, pending, scheduled or retrying:
// nothing more can reach the fake. (The DMs to Dana are archived: they
// failed for good, as they should.)
func waitIdle(t *testing.T, s *fleettest.Stack) {
	t.Helper()
	waitFor(t, s.Ctx, "the queues to be idle", func() bool {
		c := s.Counts()
		return c.Active+c.Pending+c.Scheduled+c.Retry == 0
	})
}

// checkEscalations asserts what each alert got, from the fake's records,
// and logs the figures.
func checkEscalations(t *testing.T, alerts []*escAlert, msgs []telegramfake.Message) {
	t.Helper()
	found, stray := escIndex(alerts, msgs)
	for _, m := range stray {
		t.Errorf("a message the test cannot place: chat %d: %q", m.ChatID, m.Text)
	}
	dups := 0
	// once counts the copies of one step's message; a send on the wire
	// when the worker was SIGKILLed may be made again by its redelivery
	// (the Bot API has no idempotency key): at most one such copy.
	once := func(a *escAlert, what string, got []telegramfake.Message, want int) {
		switch {
		case want == 0 && len(got) > 0:
			t.Errorf("%s: %d %s, want none (acknowledged after step %d): %q", a.key, len(got), what, a.acked, got[0].Text)
		case want == 1 && len(got) == 0:
			t.Errorf("%s: no %s", a.key, what)
		case want == 1 && len(got) > 1:
			dups += len(got) - 1
			t.Logf("%s: %s sent %d times", a.key, what, len(got))
		}
	}
	steps := map[int]int{}
	var due [4][]time.Duration
	for _, a := range alerts {
		fd := found[a.key]
		if fd.msg.MessageID == 0 {
			t.Errorf("%s: the alert's message is missing", a.key)
			continue
		}
		// want is how many of step n's messages the alert should get.
		want := func(n int) int {
			if a.acked > 0 && n > a.acked {
				return 0
			}
			return 1
		}
		once(a, "step-1 notes", fd.notes[1], 1)
		once(a, "step-2 notes", fd.notes[2], want(2))
		once(a, "step-3 notes", fd.notes[3], want(3))
		once(a, "end notes", fd.ended, want(4))
		once(a, "step-3 DMs", fd.dms[3], want(3))
		for n := 1; n <= 3; n++ {
			if len(fd.notes[n]) > 0 {
				steps[n]++
			}
		}
		due[0] = append(due[0], fd.msg.At.Sub(a.posted))
		if len(fd.notes[1]) > 0 {
			due[1] = append(due[1], fd.notes[1][0].At.Sub(a.posted))
		}
		if len(fd.dms[3]) > 0 && !a.unstarted {
			due[3] = append(due[3], fd.dms[3][0].At.Sub(a.posted.Add(escWait1+escWait2)))
		}
		if len(fd.dms[3]) > 0 && fd.dms[3][0].ChatID != carolID {
			t.Errorf("%s: the step-3 DM went to %d, want Carol (%d)", a.key, fd.dms[3][0].ChatID, carolID)
		}
		if a.unstarted {
			checkUnstarted(t, a, fd, &due)
			continue
		}
		once(a, "step-2 DMs", fd.dms[2], want(2))
		if len(fd.dms[2]) > 0 {
			if fd.dms[2][0].ChatID != aliceID {
				t.Errorf("%s: the step-2 DM went to %d, want Alice (%d)", a.key, fd.dms[2][0].ChatID, aliceID)
			}
			due[2] = append(due[2], fd.dms[2][0].At.Sub(a.posted.Add(escWait1)))
		}
	}
	if dups > 1 {
		t.Errorf("%d step messages sent twice after one SIGKILL; want at most 1", dups)
	}
	t.Logf("escalation: %d alerts (%d acknowledged in their chat after step 1, %d from the DM after step 2, %d to a user who never started the bot): steps taken 1:%d 2:%d 3:%d; %d duplicates",
		len(alerts), escAlerts*3/escAckEvery, escAlerts/escAckEvery, escUnstarted, steps[1], steps[2], steps[3], dups)
	for n, what := range []string{"the alert's message (posted → sent)", "step 1 (note in the thread)", "step 2 (DM to the on-call user)", "step 3 (DM to the secondary)"} {
		p50, p99 := percentiles(due[n])
		t.Logf("escalation: %s, due → sent over %d: p50 %v p99 %v real, %v / %v Telegram time; the slowest: %v",
			what, len(due[n]), p50, p99, p50*scale, p99*scale, slowest(due[n], 4))
	}
}

// checkUnstarted asserts what an alert whose step 2 goes to Dana got: the
// step-2 note, the failure with its reason, and step 3 within seconds of
// step 2's due time rather than its 4 minutes.
func checkUnstarted(t *testing.T, a *escAlert, fd *escFound, due *[4][]time.Duration) {
	t.Helper()
	if len(fd.dms[2]) != 0 {
		t.Errorf("%s: Dana never started the bot, yet the fake accepted %d DMs to her", a.key, len(fd.dms[2]))
	}
	if len(fd.notes[2]) == 0 || !strings.Contains(fd.notes[2][0].Text, "escalated to Dana (on call in nights), step 2 of 3") {
		t.Errorf("%s: step-2 notes %v", a.key, fd.notes[2])
	}
	if len(fd.failures) != 1 || !strings.Contains(fd.failures[0].Text, "Could not reach Dana (on call in nights): the bot may not message them: they have not started a chat with it") {
		t.Errorf("%s: failure notes %v; want one naming Dana and why", a.key, fd.failures)
	}
	if len(fd.dms[3]) == 0 {
		return
	}
	due2 := a.posted.Add(escWait1)
	took := fd.dms[3][0].At.Sub(due2)
	rel := func(ms []telegramfake.Message) time.Duration {
		if len(ms) == 0 {
			return 0
		}
		return ms[0].At.Sub(due2).Round(time.Millisecond)
	}
	t.Logf("escalation: %s: step 3 reached Carol %v after step 2 was due (%v Telegram time; the step's wait is %v); step 2's note at +%v, the failure's at +%v",
		a.key, took.Round(time.Millisecond), (took * scale).Round(time.Second), escWait2*scale, rel(fd.notes[2]), rel(fd.failures))
	// Within seconds: at most a minute of Telegram time (6 s here), where
	// the step's wait is 4 minutes. The span runs from step 2's due time,
	// so it holds the taking of the whole step-2 burst (75 escalations),
	// Dana's refused DM, the next look at its delivery and Carol's DM; and
	// real-time costs that the test does not scale (the queues' wake-ups,
	// the poll of a reply waiting for its thread) count ten times over in
	// Telegram time.
	if took*scale > time.Minute {
		t.Errorf("%s: step 3 came %v (Telegram time) after step 2 was due; want within a minute of the refused DM, not its 4 minutes", a.key, took*scale)
	}
}

// slowest returns the n longest of ds, longest first, in ms.
func slowest(ds []time.Duration, n int) []time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	slices.Reverse(ds)
	ds = ds[:min(n, len(ds))]
	for i := range ds {
		ds[i] = ds[i].Round(time.Millisecond)
	}
	return ds
}

// percentiles returns the p50 and p99 of ds.
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2].Round(time.Millisecond), ds[len(ds)*99/100].Round(time.Millisecond)
}
