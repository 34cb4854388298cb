package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-dev/herald/test/fleet/fleettest"
)

// Targets of issue 37, "one sender cannot hurt another". The issue asks
// for a refusal within 200 ms, the other sender's p99 within 50 ms and a
// large body's answer within 2 s on a quiet machine; the bounds asserted
// here are looser so that a loaded CI machine passes, and the measured
// figures are logged.
const (
	// floodFor is how long sender A floods, at least.
	floodFor = 3 * time.Second
	// floodSenders is how many goroutines of A post at once.
	floodSenders = 4
	// templateBytes is the size of each flooding template text.
	templateBytes = 128 << 10
	// maxRefusal bounds the answer to each flooding request.
	maxRefusal = 2 * time.Second
	// quietMessages is how many small messages sender B posts, one after
	// another, during the flood.
	quietMessages = 200
	// maxQuietP99 bounds B's 99th percentile latency of the 202.
	maxQuietP99 = 500 * time.Millisecond
	// maxCPUPer100 bounds the producer's CPU time per 100 refused requests.
	// A refusal costs about 5 ms: the text is decoded before its length is
	// known, and the body is scanned by the JSON decoder more than once
	// (4.8 ms for the decode and the check in a benchmark on this 2-core
	// machine). Twice that fails if the work per request grows beyond a few
	// passes over the body, e.g. a template parsed or rendered per placeholder.
	maxCPUPer100 = time.Second
	// largeBytes is the size of each large invalid body.
	largeBytes = 22 << 20
	// maxLargeAnswer bounds the answer to each large invalid body.
	maxLargeAnswer = 5 * time.Second
	// maxProducerHWM bounds the producer's peak RSS (VmHWM).
	maxProducerHWM = 300 << 20
	// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100
	// on every Linux architecture Go supports.
	clockTicks = 100
)

// Two senders' tokens, each with the send scope and no quotas, so that
// nothing but the producer's own bounds stands between A's flood and the
// producer.
const (
	senderA = "isolation-sender-a-token"
	senderB = "isolation-sender-b-token"
)

// isolation is a producer serving two senders, A and B.
type isolation struct {
	s      *fleettest.Stack
	client *http.Client
	pid    int
}

// startIsolation starts Redis and the producer (no worker: a 202 is the
// producer's answer) with a tokens file naming senders A and B.
func startIsolation(t *testing.T) *isolation {
	t.Helper()
	return startIsolationWith(t, fleettest.Options{Timeout: 2 * time.Minute})
}

// startIsolationWith is startIsolation on the stack o describes.
func startIsolationWith(t *testing.T, o fleettest.Options) *isolation {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	dir := t.TempDir()
	var yaml strings.Builder
	yaml.WriteString("tokens:\n")
	for name, token := range map[string]string{"sender-a": senderA, "sender-b": senderB} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&yaml, "  - name: %s\n    scopes: [send]\n    file: %s\n"+
			"    quotas: {queued_messages: -1, queued_recipients: -1, broadcasts_per_hour: -1, alerts_per_minute: -1}\n", name, name)
	}
	tokens := filepath.Join(dir, "tokens.yaml")
	if err := os.WriteFile(tokens, []byte(yaml.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// ProducerEnv comes after the fleet's own tokens file: the last value wins.
	o.ProducerEnv = append(o.ProducerEnv, "HERALD_TOKENS_FILE="+tokens)
	s := fleettest.Start(t, o)
	tr := &http.Transport{MaxIdleConnsPerHost: 2 * floodSenders}
	t.Cleanup(tr.CloseIdleConnections)
	return &isolation{s: s, client: &http.Client{Transport: tr, Timeout: 30 * time.Second}, pid: s.Fleet.Producer.Pid()}
}

// answer is one request's outcome.
type answer struct {
	code       int
	body       string
	took       time.Duration
	err        error
	retryAfter string
}

// post sends body (size bytes; -1 for a chunked body of unknown length) to
// path with token, and times the whole answer, its body read.
func (iso *isolation) post(ctx context.Context, path, token string, body io.Reader, size int64) answer {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, iso.s.Fleet.APIBase+path, body)
	if err != nil {
		return answer{err: err}
	}
	if size >= 0 {
		req.ContentLength = size
	} else {
		req.ContentLength = 0 // with a body: unknown length, sent chunked
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	t0 := time.Now()
	resp, err := iso.client.Do(req)
	if err != nil {
		return answer{took: time.Since(t0), err: err}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return answer{code: resp.StatusCode, body: string(b), took: time.Since(t0), err: err, retryAfter: resp.Header.Get("Retry-After")}
}

// small posts the n-th small message of sender B to a private chat.
func (iso *isolation) small(ctx context.Context, label string, n int) answer {
	body := fmt.Sprintf(`{"chat":"%d","text":"%s %d"}`, 7000+n%50, label, n)
	return iso.post(ctx, "/v1/messages", senderB, strings.NewReader(body), int64(len(body)))
}

// TestTemplateFloodLeavesOthersFast: sender A posts broadcasts whose
// template is "{{" repeated to 128 KiB (four times HERALD_MAX_TEXT_LEN) from
// four goroutines for at least 3 s. Each is refused with a 400 naming the
// text, within 2 s, and at a bounded CPU cost to the producer. Meanwhile
// sender B's 200 small messages, one after another, keep a p99 within
// 500 ms.
func TestTemplateFloodLeavesOthersFast(t *testing.T) {
	iso := startIsolation(t)
	ctx := iso.s.Ctx
	template := `{"chats":[1001],"text":"` + strings.Repeat("{{", templateBytes/2) + `"}`

	flood := func() answer {
		return iso.post(ctx, "/v1/broadcasts", senderA, strings.NewReader(template), int64(len(template)))
	}
	// One of each first, so that both senders' connections are open and
	// their paths warm when the measurement starts.
	if a := flood(); a.err != nil || a.code != http.StatusBadRequest {
		t.Fatalf("A's first template: %d %v %s", a.code, a.err, a.body)
	}
	if a := iso.small(ctx, "warm-up", 0); a.err != nil || a.code != http.StatusAccepted {
		t.Fatalf("B's first message: %d %v %s", a.code, a.err, a.body)
	}

	cpu0 := cpuTime(t, iso.pid)
	start := time.Now()
	quietDone := make(chan struct{})
	var (
		mu      sync.Mutex
		refused []answer
		wg      sync.WaitGroup
	)
	for g := 0; g < floodSenders; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-quietDone:
					if time.Since(start) >= floodFor {
						return
					}
				default:
				}
				a := flood()
				mu.Lock()
				refused = append(refused, a)
				mu.Unlock()
				if ctx.Err() != nil {
					return
				}
			}
		}()
	}
	quiet := make([]answer, 0, quietMessages)
	for n := 1; n <= quietMessages; n++ {
		quiet = append(quiet, iso.small(ctx, "during the flood", n))
	}
	quietTook := time.Since(start)
	close(quietDone)
	wg.Wait()
	floodTook := time.Since(start)
	cpu := cpuTime(t, iso.pid) - cpu0

	aTimes := checkAnswers(t, "A's template", refused, http.StatusBadRequest, `"field":"text"`)
	bTimes := checkAnswers(t, "B's message during the flood", quiet, http.StatusAccepted, "")
	perRefusal := cpu / time.Duration(max(len(refused), 1))
	t.Logf("A: %d templates of %d KiB refused in %s from %d goroutines (%.0f/s): p50 %s, p99 %s, max %s",
		len(refused), len(template)>>10, floodTook.Round(time.Millisecond), floodSenders, float64(len(refused))/floodTook.Seconds(),
		pct(aTimes, 50), pct(aTimes, 99), aTimes[len(aTimes)-1])
	t.Logf("B: %d messages one after another in %s during the flood: p50 %s, p99 %s, max %s (issue 37's target: p99 50ms on a quiet machine)",
		len(bTimes), quietTook.Round(time.Millisecond), pct(bTimes, 50), pct(bTimes, 99), bTimes[len(bTimes)-1])
	t.Logf("producer CPU during the flood: %s (B's %d messages included), %s per refused template, %s per 100",
		cpu, len(quiet), perRefusal.Round(time.Microsecond), (perRefusal * 100).Round(time.Millisecond))

	if worst := aTimes[len(aTimes)-1]; worst > maxRefusal {
		t.Errorf("slowest refusal of a template took %s, want at most %s (issue 37's target: 200ms)", worst, maxRefusal)
	}
	if p99 := pct(bTimes, 99); p99 > maxQuietP99 {
		t.Errorf("B's p99 during the flood is %s, want at most %s", p99, maxQuietP99)
	}
	if budget := maxCPUPer100 * time.Duration(len(refused)) / 100; cpu > budget {
		t.Errorf("the producer spent %s of CPU on %d refused templates, want at most %s (%s per 100)", cpu, len(refused), budget, maxCPUPer100)
	}
}

// TestLargeInvalidBodiesBounded: one sender posts six invalid bodies of
// 22 MiB at once: two broadcasts listing chats far over
// HERALD_BROADCAST_MAX_CHATS (one with a declared length, one chunked), a
// broadcast whose text is 22 MiB, a message of 22 MiB (over
// HERALD_MAX_BODY_BYTES), a broadcast of 100,000 chats that are neither
// ids nor usernames (refused at the first, as it arrives), and one of
// 100,000 well-formed chats whose text is a number: it passes every check
// made while the body arrives, so it is read and decoded whole. Each gets
// its 4xx within 5 s,
// the producer's peak RSS stays within 300 MiB, and another sender's small
// messages posted meanwhile get their 202.
func TestLargeInvalidBodiesBounded(t *testing.T) {
	iso := startIsolation(t)
	ctx := iso.s.Ctx
	if a := iso.small(ctx, "warm-up", 0); a.err != nil || a.code != http.StatusAccepted {
		t.Fatalf("B's first message: %d %v %s", a.code, a.err, a.body)
	}
	// 100,000 chats (the most a broadcast may list) of 228 bytes each: 22 MiB.
	longChat := `"` + strings.Repeat("x", 228) + `",`
	badChats := func() io.Reader {
		const prefix, suffix = `{"text":"hi","chats":[`, `"x"]}`
		return patterned(prefix, longChat, suffix, len(prefix)+99_999*len(longChat)+len(suffix))
	}
	// The same length, but chats that pass (ids padded with spaces).
	paddedChat := `"` + strings.Repeat(" ", 218) + "1000000001" + `",`
	wholeBad := func() io.Reader {
		const prefix, suffix = `{"chats":[`, `"1"],"text":5}`
		return patterned(prefix, paddedChat, suffix, len(prefix)+99_999*len(paddedChat)+len(suffix))
	}
	type large struct {
		name, path  string
		body        func() io.Reader
		chunked     bool
		code        int
		field, word string // what the refusal names
	}
	bodies := []large{
		{name: "broadcast, 2.9M chats", path: "/v1/broadcasts", code: http.StatusBadRequest, field: `"chats"`,
			body: func() io.Reader { return patterned(`{"text":"hi","chats":[`, "1234567,", "1]}", largeBytes) }},
		{name: "broadcast, 2.9M chats, chunked", path: "/v1/broadcasts", chunked: true, code: http.StatusBadRequest, field: `"chats"`,
			body: func() io.Reader { return patterned(`{"text":"hi","chats":[`, "1234567,", "1]}", largeBytes) }},
		{name: "broadcast, 22 MiB text", path: "/v1/broadcasts", code: http.StatusBadRequest, field: `"text"`,
			body: func() io.Reader { return patterned(`{"chats":[1001],"text":"`, "abcdefgh", `"}`, largeBytes) }},
		{name: "message, 22 MiB text", path: "/v1/messages", code: http.StatusRequestEntityTooLarge, field: `"body_too_large"`,
			body: func() io.Reader { return patterned(`{"chat":"1001","text":"`, "abcdefgh", `"}`, largeBytes) }},
		{name: "broadcast, 100,000 bad chats", path: "/v1/broadcasts", code: http.StatusBadRequest, field: `"chats[0]"`, body: badChats},
		{name: "broadcast, 100,000 chats, text 5", path: "/v1/broadcasts", code: http.StatusBadRequest, field: `"text"`, body: wholeBad},
	}
	hwm0 := procStatus(t, iso.pid, "VmHWM")
	rss0 := procStatus(t, iso.pid, "VmRSS")

	answers := make([]answer, len(bodies))
	sizes := make([]int64, len(bodies))
	var wg sync.WaitGroup
	for i, l := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := l.body()
			sizes[i] = int64(r.(*patternReader).size)
			size := sizes[i]
			if l.chunked {
				size = -1
			}
			answers[i] = iso.post(ctx, l.path, senderA, r, size)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var quiet []answer
	for n := 1; ; n++ {
		quiet = append(quiet, iso.small(ctx, "beside the large bodies", n))
		select {
		case <-done:
		case <-time.After(50 * time.Millisecond):
			continue
		}
		break
	}
	hwm1 := procStatus(t, iso.pid, "VmHWM")
	rss1 := procStatus(t, iso.pid, "VmRSS")

	for i, l := range bodies {
		a := answers[i]
		t.Logf("%-32s %5.1f MiB: %d in %s: %.160s", l.name, mib(sizes[i]), a.code, a.took.Round(time.Millisecond), a.body)
		switch {
		case a.err != nil:
			t.Errorf("%s: %v after %s; want a %d", l.name, a.err, a.took, l.code)
		case a.code != l.code || !strings.Contains(a.body, l.field):
			t.Errorf("%s: %d %.300s; want a %d naming %s", l.name, a.code, a.body, l.code, l.field)
		case a.took > maxLargeAnswer:
			t.Errorf("%s: answered after %s, want within %s (issue 37's target: 2s)", l.name, a.took, maxLargeAnswer)
		}
	}
	bTimes := checkAnswers(t, "B's message beside the large bodies", quiet, http.StatusAccepted, "")
	t.Logf("B beside the large bodies: %d messages, p50 %s, max %s", len(bTimes), pct(bTimes, 50), bTimes[len(bTimes)-1])
	t.Logf("producer VmHWM %.1f MiB before, %.1f MiB after; VmRSS %.1f MiB before, %.1f MiB after", mib(hwm0), mib(hwm1), mib(rss0), mib(rss1))
	if hwm1 > maxProducerHWM {
		t.Errorf("the producer's peak RSS reached %.1f MiB, want at most %.0f MiB", mib(hwm1), mib(maxProducerHWM))
	}
}

// checkAnswers fails the test when an answer has no response, another
// code than code, or a body without want (when want is set); it reports the
// first such answer and how many there were. It returns every answer's
// time, sorted.
func checkAnswers(t *testing.T, what string, answers []answer, code int, want string) []time.Duration {
	t.Helper()
	times := make([]time.Duration, 0, len(answers))
	bad := 0
	for i, a := range answers {
		times = append(times, a.took)
		if a.err == nil && a.code == code && strings.Contains(a.body, want) {
			continue
		}
		if bad++; bad == 1 {
			t.Errorf("%s %d: %d %v %.200s; want a %d %s", what, i+1, a.code, a.err, a.body, code, naming(want))
		}
	}
	if bad > 1 {
		t.Errorf("%d of %d answers to %s were wrong", bad, len(answers), what)
	}
	slices.Sort(times)
	return times
}

// patternReader yields prefix, then unit repeated, then suffix: size bytes
// in all (the last unit cut short to fit), without holding them.
type patternReader struct {
	r    io.Reader
	size int
}

func (p *patternReader) Read(b []byte) (int, error) { return p.r.Read(b) }

// patterned is a body of size bytes made of prefix, unit repeated and
// suffix. size must leave room for prefix and suffix.
func patterned(prefix, unit, suffix string, size int) io.Reader {
	fill := size - len(prefix) - len(suffix)
	block := strings.Repeat(unit, max(1, (64<<10)/len(unit)))
	return &patternReader{size: size, r: io.MultiReader(strings.NewReader(prefix),
		io.LimitReader(&repeater{block: block}, int64(fill)), strings.NewReader(suffix))}
}

// repeater reads block over and over; unit boundaries are kept because
// block is whole units and every Read starts where the last one ended.
type repeater struct {
	block string
	at    int
}

func (r *repeater) Read(b []byte) (int, error) {
	n := copy(b, r.block[r.at:])
	r.at = (r.at + n) % len(r.block)
	return n, nil
}

// pct is the p-th percentile of sorted durations.
func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[len(sorted)*p/100]
}

// cpuTime reads a process's user plus system CPU time from
// /proc/<pid>/stat (fields 14 and 15, after the parenthesised name).
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatalf("reading the producer's CPU time: %v", err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		t.Fatalf("/proc/%d/stat has %d fields after the name: %q", pid, len(fields), s)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// procStatus reads a kB line of /proc/<pid>/status (VmHWM, VmRSS) in bytes.
func procStatus(t *testing.T, pid int, key string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatalf("reading the producer's %s: %v", key, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("parsing %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, key)
	return 0
}

// naming says what an answer's body must hold, if anything.
func naming(want string) string {
	if want == "" {
		return ""
	}
	return "naming " + want
}
