package alerts

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

// threadRouter is newTestRouter with a Redis client for threads and
// buttons.
func threadRouter(t testing.TB, src string, enq enqueuer, rdb redis.Cmdable) *Router {
	t.Helper()
	r := newTestRouter(t, src, enq)
	r.cfg.Redis = rdb
	return r
}

const threadTable = `
routes:
  - name: replies
    destinations: [1, {chat: 2, thread: 9}]
  - name: edits
    on_resolve: edit
    destinations: [1]
  - name: news
    on_resolve: new
    destinations: [3]
`

// threads returns the thread of every message a dispatch stored.
func (b *redisBundle) threads(t *testing.T, res Dispatched) []jobs.Thread {
	t.Helper()
	var out []jobs.Thread
	for _, m := range res.Messages {
		msg := b.task(t, m.Queue, m.TaskID)
		if msg.Thread == nil {
			t.Fatalf("message to %s has no thread", msg.Chat)
		}
		out = append(out, *msg.Thread)
	}
	return out
}

// A firing alert opens a thread per route and destination; a repeat while
// it fires replies; its resolution replies, edits or comes on its own per
// on_resolve, and closes the thread.
func TestThreadsFiringRepeatResolved(t *testing.T) {
	t.Parallel()
	b := newRedisBundle(t)
	r := threadRouter(t, threadTable, b.enq, b.rdb)
	ctx := context.Background()
	alert := Alert{Title: "disk full", Severity: SeverityWarning, Key: "am/abc", Labels: map[string]string{"host": "db-1"}}
	dispatch := func(status Status) []jobs.Thread {
		t.Helper()
		a := alert
		a.Status = status
		res, err := r.Dispatch(ctx, []Alert{a})
		if err != nil {
			t.Fatal(err)
		}
		return b.threads(t, res)
	}
	keysWant := []string{"alert/am/abc/replies", "alert/am/abc/replies/9", "alert/am/abc/edits", "alert/am/abc/news"}
	check := func(step string, got []jobs.Thread, want []jobs.Thread) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: threads\n%+v\nwant\n%+v", step, got, want)
		}
	}
	all := func(mode string, close bool) []jobs.Thread {
		out := make([]jobs.Thread, len(keysWant))
		for i, k := range keysWant {
			out[i] = jobs.Thread{Key: k, Mode: mode, Close: close}
		}
		return out
	}

	check("firing", dispatch(StatusFiring), all(jobs.ThreadOpen, false))
	// The enqueuer marked each thread pending; the worker would replace
	// that with the message id.
	for _, chat := range []string{"1", "2", "3"} {
		for _, k := range keysWant {
			if v, err := b.rdb.Get(ctx, keys.Bot("").Thread(chat, k)).Result(); err == nil && v != "pending" {
				t.Errorf("thread %s in %s = %q, want pending", k, chat, v)
			}
		}
	}
	check("repeat while pending", dispatch(StatusFiring), all(jobs.ThreadReply, false))
	b.rdb.Set(ctx, keys.Bot("").Thread("1", "alert/am/abc/replies"), "17:t", time.Hour)
	check("repeat after the first was sent", dispatch(StatusFiring), all(jobs.ThreadReply, false))

	check("resolved", dispatch(StatusResolved), []jobs.Thread{
		{Key: "alert/am/abc/replies", Mode: jobs.ThreadReply, Close: true},
		{Key: "alert/am/abc/replies/9", Mode: jobs.ThreadReply, Close: true},
		{Key: "alert/am/abc/edits", Mode: jobs.ThreadEdit, Close: true},
		{Key: "alert/am/abc/news", Mode: jobs.ThreadOpen, Close: true},
	})

	// Once the worker has closed the threads, the alert firing again opens
	// new ones.
	for _, chat := range []string{"1", "2", "3"} {
		for _, k := range keysWant {
			b.rdb.Del(ctx, keys.Bot("").Thread(chat, k))
		}
	}
	check("firing again", dispatch(StatusFiring), all(jobs.ThreadOpen, false))
}

// Two alerts of one batch with the same identity: the first opens, the
// second is a repeat.
func TestThreadsRepeatWithinBatch(t *testing.T) {
	t.Parallel()
	b := newRedisBundle(t)
	rec := &recorder{}
	r := threadRouter(t, "routes:\n  - name: a\n    destinations: [1]\n", rec, b.rdb)
	if _, err := r.Dispatch(context.Background(), []Alert{{Title: "x"}, {Title: "x"}, {Title: "y"}}); err != nil {
		t.Fatal(err)
	}
	var modes []string
	for _, q := range rec.requests() {
		modes = append(modes, q.Message.Thread.Mode)
	}
	if want := []string{jobs.ThreadOpen, jobs.ThreadReply, jobs.ThreadOpen}; !slices.Equal(modes, want) {
		t.Errorf("modes %v, want %v", modes, want)
	}
}

// Coalesced messages (and those quiet hours hold) may end up in a digest:
// they carry no thread and no buttons, and a resolved alert's digest line
// says that it resolved.
func TestThreadsNotOnCoalescedMessages(t *testing.T) {
	t.Parallel()
	b := newRedisBundle(t)
	rec := &recorder{}
	holder := &fakeHolder{}
	r := threadRouter(t, `
routes:
  - name: folded
    coalesce: true
    buttons: [ack]
    destinations: [1]
  - name: night
    buttons: [ack]
    quiet_hours: {start: "00:00", end: "24:00", time_zone: UTC}
    destinations: [2]
`, rec, b.rdb)
	r.cfg.Holder = holder
	ctx := context.Background()
	resolved := Alert{Title: "disk full", Severity: SeverityWarning, Status: StatusResolved, URL: "https://x.test/1", Labels: map[string]string{"a": "b"}}
	// The alert fired before the quiet hours: its thread is open in chat 2.
	openThread := keys.Bot("").Thread("2", "alert/"+resolved.Identity()+"/night")
	b.rdb.Set(ctx, openThread, "5:t", time.Hour)
	res, err := r.Dispatch(ctx, []Alert{resolved, {Title: "db down", Severity: SeverityCritical, Labels: map[string]string{"a": "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	if b.mr.Exists(openThread) {
		t.Errorf("a resolution held by quiet hours left its thread open")
	}
	reqs := rec.requests()
	// The warning: coalesced (folded) and held (night). The critical alert:
	// never coalesced nor held, so threaded on both routes.
	if len(reqs) != 3 || len(res.Held) != 1 {
		t.Fatalf("%d enqueued, %d held; want 3 and 1", len(reqs), len(res.Held))
	}
	folded := reqs[0]
	if !folded.Coalesce || folded.Message.Thread != nil || folded.Message.Buttons != nil {
		t.Errorf("coalesced message: coalesce %v, thread %+v, buttons %v", folded.Coalesce, folded.Message.Thread, folded.Message.Buttons)
	}
	if want := (jobs.DigestItem{Title: "✅ Resolved: disk full", URL: "https://x.test/1"}); *folded.Item != want {
		t.Errorf("digest item %+v, want %+v", *folded.Item, want)
	}
	held := holder.reqs[0]
	if held.Message.Thread != nil || held.Message.Buttons != nil || held.Item.Title != "✅ Resolved: disk full" {
		t.Errorf("held message: thread %+v, buttons %v, item %+v", held.Message.Thread, held.Message.Buttons, held.Item)
	}
	for _, q := range reqs[1:] {
		if q.Message.Thread == nil || q.Message.Thread.Mode != jobs.ThreadOpen || q.Message.Buttons == nil {
			t.Errorf("critical message to %s: thread %+v, buttons %v; want an open thread with buttons", q.Message.Chat, q.Message.Thread, q.Message.Buttons)
		}
	}
	// A firing alert's digest line is its title.
	if it := digestItem(&Alert{Title: "t"}); it.Title != "t" {
		t.Errorf("firing item title %q", it.Title)
	}
	long := digestItem(&Alert{Title: strings.Repeat("😀", MaxTitleLen), Status: StatusResolved})
	if n := len([]rune(long.Title)); n == 0 || !strings.HasPrefix(long.Title, resolvedItemPrefix) || !strings.HasSuffix(long.Title, "…") {
		t.Errorf("long resolved title (%d runes) %.40q…", n, long.Title)
	}
}

// A firing alert on a route with buttons gets a keyboard whose subject
// names the alert's labels, the thread, the text and who may press.
func TestButtons(t *testing.T) {
	t.Parallel()
	b := newRedisBundle(t)
	rec := &recorder{}
	r := threadRouter(t, `
routes:
  - name: oncall
    bot: pages
    buttons: [silence_24h, ack, silence_1h]
    allowed_users: ["@alice", 42]
    destinations: [{chat: -1001, thread: 3}]
`, rec, b.rdb)
	ctx := context.Background()
	a := Alert{Title: "API 5xx", Severity: SeverityCritical, Source: "alertmanager", Key: "alertmanager/f00",
		Labels: map[string]string{"service": "api", "alertname": "High5xx", "severity": "critical"}}
	if _, err := r.Dispatch(ctx, []Alert{a}); err != nil {
		t.Fatal(err)
	}
	m := rec.requests()[0].Message
	rows := m.Buttons.Rows()
	if len(rows) != 1 || len(rows[0]) != 3 {
		t.Fatalf("keyboard %+v, want one row of three", rows)
	}
	var actions []string
	var ref string
	for _, btn := range rows[0] {
		act, rf, ok := buttons.ParseData(btn.Data)
		if !ok {
			t.Fatalf("button %+v has no Herald callback data", btn)
		}
		actions, ref = append(actions, act), rf
	}
	if want := []string{buttons.Ack, buttons.Silence1h, buttons.Silence24h}; !slices.Equal(actions, want) {
		t.Errorf("actions %v, want %v", actions, want)
	}
	s, err := buttons.Load(ctx, b.rdb, "pages", ref)
	if err != nil {
		t.Fatal(err)
	}
	wantMatchers := []buttons.Matcher{
		{Name: "source", Value: "alertmanager"},
		{Name: "alertname", Value: "High5xx"},
		{Name: "service", Value: "api"},
		{Name: "labels.severity", Value: "critical"},
	}
	if !slices.Equal(s.Matchers, wantMatchers) {
		t.Errorf("matchers %+v\nwant %+v", s.Matchers, wantMatchers)
	}
	if s.Bot != "pages" || s.Chat != "-1001" || s.ThreadKey != "alert/alertmanager/f00/oncall/3" || s.ThreadKey != m.Thread.Key ||
		s.Text != m.Text || s.ParseMode != "HTML" || s.Alert != "API 5xx" || !slices.Equal(s.Allowed, []string{"@alice", "42"}) ||
		!slices.Equal(s.Actions, actions) {
		t.Errorf("subject %+v", s)
	}
	if ttl := b.mr.TTL(keys.Bot("pages").ButtonSubject(ref)); ttl != jobs.ThreadRetention {
		t.Errorf("subject kept for %v, want %v", ttl, jobs.ThreadRetention)
	}

	// Resolved: no buttons. Without labels: acknowledge only (a silence of
	// the source alone would mute too much).
	res := a
	res.Status = StatusResolved
	if _, err := r.Dispatch(ctx, []Alert{res, {Title: "no labels", Source: "api"}}); err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if reqs[1].Message.Buttons != nil {
		t.Errorf("resolved message has buttons %+v", reqs[1].Message.Buttons)
	}
	if rows := reqs[2].Message.Buttons.Rows(); len(rows) != 1 || len(rows[0]) != 1 || !strings.HasPrefix(rows[0][0].Data, "h1:ack:") {
		t.Errorf("unlabelled alert's keyboard %+v, want acknowledge only", rows)
	}
}

// Without a Redis client the router sends neither threads nor buttons;
// photos do not need one.
func TestThreadsNeedRedis(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	r := newTestRouter(t, "routes:\n  - name: a\n    buttons: [ack]\n    destinations: [1]\n", rec)
	if _, err := r.Dispatch(context.Background(), []Alert{{Title: "x", ImageURL: "https://img.test/x.png", Labels: map[string]string{"a": "b"}}}); err != nil {
		t.Fatal(err)
	}
	m := rec.requests()[0].Message
	if m.Thread != nil || m.Buttons != nil {
		t.Errorf("thread %+v, buttons %+v without Redis", m.Thread, m.Buttons)
	}
	if m.Photo == nil || m.Photo.URL != "https://img.test/x.png" {
		t.Errorf("photo %+v", m.Photo)
	}
}

// Redis failing while the threads are read: 503 material, nothing sent.
func TestThreadsRedisDown(t *testing.T) {
	t.Parallel()
	b := newRedisBundle(t)
	closed := redis.NewClient(&redis.Options{Addr: b.mr.Addr()})
	_ = closed.Close()
	rec := &recorder{}
	r := threadRouter(t, "routes:\n  - name: a\n    destinations: [1]\n", rec, closed)
	_, err := r.Dispatch(context.Background(), []Alert{{Title: "x"}})
	if !errors.Is(err, jobs.ErrUnavailable) {
		t.Fatalf("error %v, want one wrapping jobs.ErrUnavailable", err)
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("%d messages enqueued", n)
	}
}

func TestPhotoFromAlert(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	r := newTestRouter(t, "routes:\n  - name: a\n    destinations: [1, 2]\n", rec)
	if _, err := r.Dispatch(context.Background(), []Alert{{Title: "graph", ImageURL: "http://grafana.test/render/1.png"}}); err != nil {
		t.Fatal(err)
	}
	for _, q := range rec.requests() {
		if q.Message.Photo == nil || q.Message.Photo.URL != "http://grafana.test/render/1.png" {
			t.Errorf("message to %s: photo %+v", q.Message.Chat, q.Message.Photo)
		}
	}
	for _, bad := range []string{"ftp://x.test/a.png", "/render/1.png", "https://" + strings.Repeat("x", MaxURLLen)} {
		_, err := r.Dispatch(context.Background(), []Alert{{Title: "graph", ImageURL: bad}})
		var verr *jobs.ValidationError
		if !errors.As(err, &verr) || verr.Fields[0].Field != "image_url" {
			t.Errorf("image_url %.30q: error %v, want one naming image_url", bad, err)
		}
	}
}

func TestIdentity(t *testing.T) {
	t.Parallel()
	a := Alert{Title: "disk full", Source: "api", Labels: map[string]string{"host": "db-1", "team": "db"}}
	b := Alert{Title: "disk full", Source: "api", Labels: map[string]string{"team": "db", "host": "db-1"}, Status: StatusResolved, Body: "ok now", Fingerprint: "x"}
	if a.Identity() != b.Identity() || !strings.HasPrefix(a.Identity(), "auto:") || len(a.Identity()) != len("auto:")+32 {
		t.Errorf("identities %q and %q, want one derived key", a.Identity(), b.Identity())
	}
	for _, c := range []Alert{
		{Title: "disk fuller", Source: "api", Labels: a.Labels},
		{Title: "disk full", Source: "cron", Labels: a.Labels},
		{Title: "disk full", Source: "api", Labels: map[string]string{"host": "db-2", "team": "db"}},
		// Field boundaries count: "ab"+"c" is not "a"+"bc".
		{Title: "api" + "disk full", Labels: a.Labels},
	} {
		if c.Identity() == a.Identity() {
			t.Errorf("%+v has the identity of %+v", c, a)
		}
	}
	if k := (&Alert{Title: "x", Key: "mine"}).Identity(); k != "mine" {
		t.Errorf("identity with a key = %q", k)
	}
}

func TestThreadKey(t *testing.T) {
	t.Parallel()
	if k := threadKey("am/1", "db", destination{chat: "1"}); k != "alert/am/1/db" {
		t.Errorf("key %q", k)
	}
	if k := threadKey("am/1", "db", destination{chat: "1", thread: 7}); k != "alert/am/1/db/7" {
		t.Errorf("key %q", k)
	}
	long := threadKey(strings.Repeat("é", maxKeyLen), "route", destination{chat: "1"})
	if !strings.HasPrefix(long, "alert/sha256:") || len(long) > jobs.MaxThreadKey {
		t.Errorf("long key %q", long)
	}
	// The longest key kept as it is fills MaxThreadKey with the namespace.
	id := strings.Repeat("i", jobs.MaxThreadKey-len("alert/")-len("/r"))
	if k := threadKey(id, "r", destination{chat: "1"}); k != "alert/"+id+"/r" {
		t.Errorf("key of %d bytes hashed: %q", len(id), k)
	}
	if k := threadKey(id+"i", "r", destination{chat: "1"}); !strings.HasPrefix(k, "alert/sha256:") {
		t.Errorf("key of %d bytes kept: %q", len(id)+1, k)
	}
}

func TestSilenceMatchers(t *testing.T) {
	t.Parallel()
	labels := map[string]string{"alertname": "A", "zone": "z", "source": "s", "labels.x": "y", "empty": "", "big": strings.Repeat("v", MaxLabelLen+1)}
	got := silenceMatchers(&Alert{Source: "grafana", Labels: labels})
	want := []buttons.Matcher{
		{Name: "source", Value: "grafana"}, {Name: "alertname", Value: "A"},
		{Name: "labels.labels.x", Value: "y"}, {Name: "labels.source", Value: "s"}, {Name: "zone", Value: "z"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("matchers %+v\nwant %+v", got, want)
	}
	many := map[string]string{}
	for i := range 40 {
		many[string(rune('a'+i%26))+strings.Repeat("x", i/26)] = "v"
	}
	if got := silenceMatchers(&Alert{Source: "s", Labels: many}); len(got) != maxSilenceMatchers {
		t.Errorf("%d matchers for 40 labels, want %d", len(got), maxSilenceMatchers)
	}
	if got := silenceMatchers(&Alert{Source: "s"}); got != nil {
		t.Errorf("matchers without labels %+v, want none", got)
	}
}
