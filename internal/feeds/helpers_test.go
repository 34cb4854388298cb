package feeds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/test/redistest"
)

// recorder is an alerts.Dispatcher that keeps what it is given.
type recorder struct {
	mu     sync.Mutex
	alerts []alerts.Alert
	calls  int
	// fail, when set, decides the error of the n-th call (1-based).
	fail func(n int, a alerts.Alert) error
}

func (r *recorder) Dispatch(_ context.Context, batch []alerts.Alert) (alerts.Dispatched, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.fail != nil {
		for _, a := range batch {
			if err := r.fail(r.calls, a); err != nil {
				return alerts.Dispatched{}, err
			}
		}
	}
	out := alerts.Dispatched{}
	for _, a := range batch {
		r.alerts = append(r.alerts, a)
		out.Messages = append(out.Messages, jobs.Result{TaskID: jobs.IdempotencyID("", a.Fingerprint), Queue: jobs.QueueDefault})
	}
	return out, nil
}

func (r *recorder) setFail(f func(n int, a alerts.Alert) error) {
	r.mu.Lock()
	r.fail = f
	r.mu.Unlock()
}

// titles returns the titles dispatched so far, in order.
func (r *recorder) titles() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, a := range r.alerts {
		out = append(out, a.Title)
	}
	return out
}

func (r *recorder) all() []alerts.Alert {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]alerts.Alert(nil), r.alerts...)
}

// testItem is one item of a generated RSS document.
type testItem struct {
	GUID, Title, Link, Desc string
	Published               time.Time
}

// rssDoc renders items as an RSS 2.0 document.
func rssDoc(items ...testItem) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<rss version="2.0"><channel><title>Test feed</title><link>https://feed.test/</link><description>d</description>` + "\n")
	for _, it := range items {
		b.WriteString("<item>")
		if it.Title != "" {
			fmt.Fprintf(&b, "<title>%s</title>", html.EscapeString(it.Title))
		}
		if it.Link != "" {
			fmt.Fprintf(&b, "<link>%s</link>", html.EscapeString(it.Link))
		}
		if it.GUID != "" {
			fmt.Fprintf(&b, `<guid isPermaLink="false">%s</guid>`, html.EscapeString(it.GUID))
		}
		if !it.Published.IsZero() {
			fmt.Fprintf(&b, "<pubDate>%s</pubDate>", it.Published.UTC().Format(time.RFC1123Z))
		}
		if it.Desc != "" {
			fmt.Fprintf(&b, "<description>%s</description>", html.EscapeString(it.Desc))
		}
		b.WriteString("</item>\n")
	}
	b.WriteString("</channel></rss>\n")
	return []byte(b.String())
}

// numbered returns items n..1 (newest first), with GUIDs "item-<i>".
func numbered(from, to int) []testItem {
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var out []testItem
	for i := to; i >= from; i-- {
		out = append(out, testItem{
			GUID:      fmt.Sprintf("item-%d", i),
			Title:     fmt.Sprintf("Item %d", i),
			Link:      fmt.Sprintf("https://feed.test/items/%d", i),
			Desc:      fmt.Sprintf("Body of item %d", i),
			Published: base.Add(time.Duration(i) * time.Hour),
		})
	}
	return out
}

// validatorMode says which cache validators the feed server sends.
type validatorMode int

const (
	noValidators validatorMode = iota
	etagOnly
	lastModifiedOnly
	bothValidators
)

// feedServer serves one changing feed document on 127.0.0.1 and records
// the conditional requests it gets.
type feedServer struct {
	srv *httptest.Server

	mu          sync.Mutex
	body        []byte
	version     int // bumped by set; Last-Modified derives from it
	mode        validatorMode
	status      int // when non-zero, answered instead of the feed
	header      http.Header
	requests    int
	notModified int
	gotINM      []string // If-None-Match of each request
	gotIMS      []string // If-Modified-Since of each request
	userAgents  []string
}

func newFeedServer(t *testing.T, mode validatorMode, body []byte) *feedServer {
	t.Helper()
	fs := &feedServer{body: body, mode: mode, version: 1}
	fs.srv = httptest.NewServer(http.HandlerFunc(fs.serve))
	t.Cleanup(fs.srv.Close)
	return fs
}

func (fs *feedServer) URL() string { return fs.srv.URL + "/feed.xml" }

func (fs *feedServer) etag() string {
	sum := sha256.Sum256(fs.body)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}

func (fs *feedServer) lastModified() string {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(fs.version) * time.Hour).Format(http.TimeFormat)
}

func (fs *feedServer) serve(w http.ResponseWriter, r *http.Request) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.requests++
	fs.gotINM = append(fs.gotINM, r.Header.Get("If-None-Match"))
	fs.gotIMS = append(fs.gotIMS, r.Header.Get("If-Modified-Since"))
	fs.userAgents = append(fs.userAgents, r.Header.Get("User-Agent"))
	for k, v := range fs.header {
		w.Header()[k] = v
	}
	if fs.status != 0 {
		w.WriteHeader(fs.status)
		return
	}
	etag, lm := fs.etag(), fs.lastModified()
	if fs.mode == etagOnly || fs.mode == bothValidators {
		w.Header().Set("ETag", etag)
		if inm := r.Header.Get("If-None-Match"); inm != "" {
			if inm == etag {
				fs.notModified++
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
	}
	if fs.mode == lastModifiedOnly || fs.mode == bothValidators {
		w.Header().Set("Last-Modified", lm)
		if ims := r.Header.Get("If-Modified-Since"); ims != "" && r.Header.Get("If-None-Match") == "" {
			if ims == lm {
				fs.notModified++
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
	}
	w.Header().Set("Content-Type", "application/rss+xml")
	_, _ = w.Write(fs.body)
}

// set replaces the document.
func (fs *feedServer) set(body []byte) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.body = body
	fs.version++
}

// fail makes the server answer status (0: serve the feed again).
func (fs *feedServer) fail(status int, header http.Header) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.status = status
	fs.header = header
}

// stats returns the request and 304 counts.
func (fs *feedServer) stats() (requests, notModified int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.requests, fs.notModified
}

// lastValidators returns the validators of the latest request.
func (fs *feedServer) lastValidators() (inm, ims string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.requests == 0 {
		return "", ""
	}
	return fs.gotINM[len(fs.gotINM)-1], fs.gotIMS[len(fs.gotIMS)-1]
}

// testRedis starts a real redis-server for the test and returns a client.
func testRedis(t *testing.T) *redis.Client {
	t.Helper()
	return redistest.Start(t).Client(t)
}

// redisServer starts a real redis-server for the test.
func redisServer(t *testing.T) *redistest.Server {
	t.Helper()
	return redistest.Start(t)
}

// testPoller is a poller with the scheduler slots of the feeds a test
// polls by hand, so failures in a row add up as under Run.
type testPoller struct {
	*poller
	slots map[string]*slot
}

// newPoller builds a poller for tests; edit adjusts the config first.
func newPoller(t *testing.T, rdb redis.UniversalClient, d alerts.Dispatcher, feeds []feed, edit func(*Config)) *testPoller {
	t.Helper()
	cfg := Config{File: file{Feeds: feeds}, Redis: rdb, Dispatcher: d, Logger: discardLogger()}
	if edit != nil {
		edit(&cfg)
	}
	p, err := newFeedPoller(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	tp := &testPoller{poller: p, slots: map[string]*slot{}}
	for _, fd := range p.cfg.File.Feeds {
		tp.slots[fd.Name] = &slot{feed: fd}
	}
	return tp
}

// pollNow runs one poll of the named feed the way the scheduler does, but
// deletes the lease afterwards so the test can poll again at once. It
// returns the outcome and the wait the scheduler would apply.
func (tp *testPoller) pollNow(t *testing.T, name string) (outcome, time.Duration) {
	t.Helper()
	s := tp.slots[name]
	if s == nil {
		t.Fatalf("no feed %q", name)
	}
	out := tp.poll(context.Background(), s.feed)
	delay := tp.account(s, out)
	tp.releaseLease(context.Background(), s.feed, out, 0)
	return out, delay
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantResult(t *testing.T, out outcome, want result) {
	t.Helper()
	if out.result != want {
		t.Fatalf("poll result %q (error %v), want %q", out.result, out.err, want)
	}
}

// value reads a counter or gauge.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	switch {
	case d.Counter != nil:
		return d.Counter.GetValue()
	case d.Gauge != nil:
		return d.Gauge.GetValue()
	}
	t.Fatalf("metric %v is neither a counter nor a gauge", m.Desc())
	return 0
}

// seriesCount is the number of series of the named family in reg.
func seriesCount(t *testing.T, reg *prometheus.Registry, name string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}
