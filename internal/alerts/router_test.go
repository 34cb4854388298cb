package alerts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/markup"
)

const dispatchTable = `
routes:
  - name: pager
    match: {severity: critical}
    destinations:
      - chat: "-1001"
      - chat: "-1002"
        thread: 5
  - name: digest
    match: {source: github}
    coalesce: true
    queue: low
    parse_mode: MarkdownV2
    disable_link_preview: true
    destinations: ["@herald_news"]
  - name: loud
    match: {labels: {loud: "yes"}}
    disable_notification: false
    parse_mode: plain
    destinations: [7]
  - name: rest
    default: true
    disable_notification: true
    destinations: [9]
`

func TestDispatchRequests(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	r := newTestRouter(t, dispatchTable, rec)
	batch := []Alert{
		{Title: "db down", Severity: "critical", Fingerprint: "fp-1", Source: "github", URL: "https://x.test/1", Body: "details"},
		{Title: "release", Source: "github", Body: "v1.2"},
		{Title: "noise", Severity: "warning", Labels: map[string]string{"loud": "yes"}},
		{Title: "quiet info", Labels: map[string]string{"loud": "yes"}},
		{Title: "leftover", Severity: "warning"},
	}
	res, err := r.Dispatch(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	type want struct {
		chat, queue, mode, key string
		thread                 int
		silent, noPreview      bool
		coalesce               bool
	}
	wants := []want{
		{chat: "-1001", queue: "critical", mode: "HTML", key: "fp-1/pager/-1001"},
		{chat: "-1002", thread: 5, queue: "critical", mode: "HTML", key: "fp-1/pager/-1002:5"},
		{chat: "@herald_news", queue: "low", mode: "MarkdownV2", key: "fp-1/digest/@herald_news", noPreview: true, coalesce: true},
		{chat: "@herald_news", queue: "low", mode: "MarkdownV2", noPreview: true, coalesce: true, silent: true},
		{chat: "7", queue: "default", mode: ""},
		// disable_notification: false on the route overrides the info default.
		{chat: "7", queue: "default", mode: ""},
		{chat: "9", queue: "default", mode: "HTML", silent: true},
	}
	if len(reqs) != len(wants) || len(res.Messages) != len(wants) {
		t.Fatalf("%d requests and %d results, want %d", len(reqs), len(res.Messages), len(wants))
	}
	for i, w := range wants {
		q, m := reqs[i], reqs[i].Message
		got := want{chat: m.Chat, queue: q.Queue, mode: m.ParseMode, key: m.IdempotencyKey, thread: m.MessageThreadID,
			silent: m.DisableNotification, noPreview: m.DisableLinkPreview, coalesce: q.Coalesce}
		if got != w {
			t.Errorf("request %d = %+v\nwant %+v", i, got, w)
		}
		if res.Messages[i].TaskID != m.Chat+"#"+string(rune('1'+i)) {
			t.Errorf("result %d = %+v, out of order", i, res.Messages[i])
		}
		if q.Coalesce != (q.Item != nil) {
			t.Errorf("request %d: coalesce %v with item %+v", i, q.Coalesce, q.Item)
		}
		if err := markup.Validate(m.Text, markup.Mode(m.ParseMode)); err != nil {
			t.Errorf("request %d: invalid text %q: %v", i, m.Text, err)
		}
	}
	if it := reqs[2].Item; *it != (jobs.DigestItem{Title: "db down", URL: "https://x.test/1", Summary: "details"}) {
		t.Errorf("digest item %+v", it)
	}
	// An info alert is silent unless the route says otherwise.
	info := newTestRouter(t, "routes:\n  - name: a\n    destinations: [1]\n", &recorder{})
	rec2 := info.enq.(*recorder)
	if _, err := info.Dispatch(context.Background(), []Alert{{Title: "i"}, {Title: "w", Severity: "warning"}}); err != nil {
		t.Fatal(err)
	}
	if got := rec2.requests(); !got[0].Message.DisableNotification || got[1].Message.DisableNotification {
		t.Errorf("info silent %v, warning silent %v; want true, false", got[0].Message.DisableNotification, got[1].Message.DisableNotification)
	}
}

func TestDispatchValidatesTheWholeBatchFirst(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	r := newTestRouter(t, dispatchTable, rec)
	_, err := r.Dispatch(context.Background(), []Alert{
		{Title: "fine"},
		{Title: " ", Severity: "fatal"},
		{Title: "bad url", URL: "ftp://x"},
	})
	var verr *jobs.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("error %v, want a *jobs.ValidationError", err)
	}
	got := map[string]bool{}
	for _, f := range verr.Fields {
		got[f.Field] = true
	}
	for _, f := range []string{"alerts[1].title", "alerts[1].severity", "alerts[2].url"} {
		if !got[f] {
			t.Errorf("field %s not reported in %v", f, verr.Fields)
		}
	}
	if len(rec.requests()) != 0 {
		t.Fatal("messages enqueued from an invalid batch")
	}
	_, err = r.Dispatch(context.Background(), []Alert{{Title: ""}})
	if !errors.As(err, &verr) || verr.Fields[0].Field != "title" {
		t.Fatalf("single alert: %v, want field title without a prefix", err)
	}
	// The caller's alerts are not modified.
	batch := []Alert{{Title: "  spaced  "}}
	if _, err := r.Dispatch(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if batch[0].Title != "  spaced  " || batch[0].Severity != "" {
		t.Errorf("Dispatch changed the caller's alert: %+v", batch[0])
	}
}

// failingEnqueuer fails one call, then passes everything to a real Enqueuer.
type failingEnqueuer struct {
	real   *jobs.Enqueuer
	mu     sync.Mutex
	calls  int
	failAt int
}

func (f *failingEnqueuer) Enqueue(ctx context.Context, req jobs.Request) (jobs.Result, error) {
	f.mu.Lock()
	f.calls++
	fail := f.calls == f.failAt
	f.mu.Unlock()
	if fail {
		return jobs.Result{}, jobs.ErrUnavailable
	}
	return f.real.Enqueue(ctx, req)
}

// A sender retrying after a partial failure gets every message exactly once.
func TestDispatchRetryAfterPartialFailure(t *testing.T) {
	t.Parallel()
	b := newRedisBundle(t)
	fe := &failingEnqueuer{real: b.enq, failAt: 3}
	r := newTestRouter(t, dispatchTable, fe)
	batch := []Alert{
		{Title: "db down", Severity: "critical", Source: "github", Fingerprint: "incident-7"},
		{Title: "db still down", Severity: "critical", Fingerprint: "incident-8"},
	}
	// pager (2 destinations) + digest for the first, pager for the second.
	res, err := r.Dispatch(context.Background(), batch)
	if !errors.Is(err, jobs.ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
	if len(res.Messages) != 2 || len(b.taskKeys()) != 2 {
		t.Fatalf("before the failure %d results, %d tasks; want 2 and 2", len(res.Messages), len(b.taskKeys()))
	}
	res, err = r.Dispatch(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	var dups []bool
	for _, m := range res.Messages {
		dups = append(dups, m.Duplicate)
	}
	if want := []bool{true, true, false, false, false}; !equalBools(dups, want) {
		t.Fatalf("duplicates %v, want %v", dups, want)
	}
	if n := len(b.taskKeys()); n != 5 {
		t.Fatalf("%d tasks stored, want 5 (one per destination, none twice)", n)
	}
	m := b.task(t, "critical", res.Messages[4].TaskID)
	if m.IdempotencyKey != "incident-8/pager/-1002:5" || !strings.Contains(m.Text, "db still down") {
		t.Errorf("stored %+v", m)
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	d := destination{chat: "-100123", thread: 4}
	if got := idempotencyKey("fp", "route", d); got != "fp/route/-100123:4" {
		t.Errorf("key %q", got)
	}
	long := strings.Repeat("é", MaxFingerprintLen)
	k1 := idempotencyKey(long, "route", d)
	k2 := idempotencyKey(long, "route", destination{chat: "-100123"})
	if len(k1) > maxIdempotencyKey || !strings.HasPrefix(k1, "sha256:") || k1 == k2 {
		t.Errorf("long keys %q and %q, want distinct hashes within %d bytes", k1, k2, maxIdempotencyKey)
	}
	if idempotencyKey(long, "route", d) != k1 {
		t.Error("hashed key is not stable")
	}
}

func TestNewRouterNeedsItsParts(t *testing.T) {
	t.Parallel()
	b := newRedisBundle(t)
	if _, err := NewRouter(nil, b.enq, RouterConfig{}); err == nil {
		t.Error("nil table accepted")
	}
	if _, err := NewRouter(mustParse(t, dispatchTable), nil, RouterConfig{}); err == nil {
		t.Error("nil enqueuer accepted")
	}
	r, err := NewRouter(mustParse(t, dispatchTable), b.enq, RouterConfig{})
	if err != nil || r.Table() == nil {
		t.Fatalf("NewRouter: %v", err)
	}
}

func TestReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "routes.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("routes:\n  - name: first\n    default: true\n    destinations: [1]\n")
	tb, err := LoadRoutes(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	r := newTestRouter(t, "routes:\n  - name: x\n    destinations: [5]\n", rec)
	r.Swap(tb)
	old := r.Table()

	write("routes:\n  - name: second\n    destinations: [abc]\n")
	err = r.Reload(path)
	if err == nil || !strings.Contains(err.Error(), path+":3:20:") {
		t.Fatalf("Reload of a bad file: %v, want an error naming %s:3:20", err, path)
	}
	if r.Table() != old {
		t.Fatal("a bad file replaced the table")
	}
	if _, err := r.Dispatch(context.Background(), []Alert{{Title: "still routed"}}); err != nil || rec.requests()[0].Message.Chat != "1" {
		t.Fatalf("after a failed reload: %v %+v", err, rec.requests())
	}
	if err := r.Reload(filepath.Join(dir, "missing.yaml")); err == nil || r.Table() != old {
		t.Fatalf("missing file: %v; table kept: %v", err, r.Table() == old)
	}

	write("routes:\n  - name: second\n    destinations: [2]\n")
	if err := r.Reload(path); err != nil {
		t.Fatal(err)
	}
	if names := r.Table().RouteNames(); len(names) != 1 || names[0] != "second" {
		t.Fatalf("after reload: routes %v", names)
	}
	if _, err := r.Dispatch(context.Background(), []Alert{{Title: "new table"}}); err != nil || rec.requests()[1].Message.Chat != "2" {
		t.Fatalf("after reload: %v %+v", err, rec.requests())
	}
	if prev := r.Swap(nil); prev != r.Table() {
		t.Error("Swap(nil) changed the table")
	}
}

// Swapping tables while requests are dispatched drops none of them, and each
// Dispatch uses one table from its first alert to its last.
func TestSwapUnderConcurrentDispatch(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	a := mustParse(t, "routes:\n  - name: a\n    destinations: [1]\n")
	b := mustParse(t, "routes:\n  - name: b\n    destinations: [2]\n  - name: b2\n    destinations: [3]\n")
	r := newTestRouter(t, "routes:\n  - name: a\n    destinations: [1]\n", rec)
	r.Swap(a)

	const dispatchers, perDispatcher = 4, 200
	stop := make(chan struct{})
	var swapper sync.WaitGroup
	swapper.Add(1)
	go func() {
		defer swapper.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				r.Swap(b)
			} else {
				r.Swap(a)
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, dispatchers)
	total := 0
	var mu sync.Mutex
	for d := 0; d < dispatchers; d++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perDispatcher; i++ {
				res, err := r.Dispatch(context.Background(), []Alert{{Title: "one"}, {Title: "two"}})
				if err != nil {
					errs <- err
					return
				}
				chats := map[string]bool{}
				for _, m := range res.Messages {
					chats[strings.SplitN(m.TaskID, "#", 2)[0]] = true
				}
				// Table a: 2 messages to chat 1; table b: 4 messages to chats 2 and 3.
				okA := len(res.Messages) == 2 && len(chats) == 1 && chats["1"]
				okB := len(res.Messages) == 4 && len(chats) == 2 && chats["2"] && chats["3"]
				if !okA && !okB {
					errs <- errors.New("a Dispatch mixed two tables: " + strings.Join(mapKeys(chats), ","))
					return
				}
				mu.Lock()
				total += len(res.Messages)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stop)
	swapper.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := len(rec.requests()); n != total {
		t.Fatalf("%d requests recorded, %d reported", n, total)
	}
}

func mapKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
