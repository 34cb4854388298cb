package feeds

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

func TestFirstPollSendsNothingThenNewItemsOnce(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)
	srv := newFeedServer(t, noValidators, rssDoc(numbered(1, 20)...))
	rec := &recorder{}
	reg := prometheus.NewRegistry()
	p := newPoller(t, rdb, rec, []feed{{Name: "status", URL: srv.URL()}}, func(c *Config) { c.Registerer = reg })

	out, _ := p.pollNow(t, "status")
	wantResult(t, out, resultFirst)
	if out.skipped[skipFirstPoll] != 20 || len(rec.all()) != 0 {
		t.Fatalf("first poll skipped %v and dispatched %d; want 20 skipped, none sent", out.skipped, len(rec.all()))
	}

	// Unchanged feed: nothing.
	out, _ = p.pollNow(t, "status")
	wantResult(t, out, resultUnchanged)

	// Two new items: dispatched once each, oldest first.
	srv.set(rssDoc(numbered(1, 22)...))
	out, _ = p.pollNow(t, "status")
	wantResult(t, out, resultNew)
	if got := rec.titles(); !slices.Equal(got, []string{"Item 21", "Item 22"}) {
		t.Fatalf("dispatched %q, want Item 21 then Item 22", got)
	}
	for i := 0; i < 2; i++ {
		out, _ = p.pollNow(t, "status")
		wantResult(t, out, resultUnchanged)
	}
	if n := len(rec.all()); n != 2 {
		t.Fatalf("%d alerts after repeated polls, want 2", n)
	}

	a := rec.all()[1]
	want := alerts.Alert{
		Title: "Item 22", Body: "Body of item 22", Severity: alerts.SeverityInfo, Source: "feed",
		URL: "https://feed.test/items/22", Labels: map[string]string{"feed": "status"},
		Fingerprint: "feed/status/item-22", Time: time.Date(2026, 11, 1, 22, 0, 0, 0, time.UTC),
	}
	if a.Title != want.Title || a.Body != want.Body || a.Severity != want.Severity || a.Source != want.Source ||
		a.URL != want.URL || a.Fingerprint != want.Fingerprint || !a.Time.Equal(want.Time) ||
		len(a.Labels) != 1 || a.Labels["feed"] != "status" {
		t.Fatalf("alert\n %+v\nwant\n %+v", a, want)
	}

	if v := value(t, p.metrics.polls.WithLabelValues("status", "first")); v != 1 {
		t.Errorf("polls{result=first} = %v, want 1", v)
	}
	if v := value(t, p.metrics.polls.WithLabelValues("status", "unchanged")); v != 3 {
		t.Errorf("polls{result=unchanged} = %v, want 3", v)
	}
	if v := value(t, p.metrics.itemsNew.WithLabelValues("status")); v != 2 {
		t.Errorf("items_new = %v, want 2", v)
	}
	if v := value(t, p.metrics.skipped.WithLabelValues("status", skipFirstPoll)); v != 20 {
		t.Errorf("items_skipped{first_poll} = %v, want 20", v)
	}
	if n := seriesCount(t, reg, "herald_feed_polls_total"); n != len(results) {
		t.Errorf("herald_feed_polls_total has %d series, want one per result (%d)", n, len(results))
	}
}

func TestConfiguredSeverityLabelsAndSource(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)
	srv := newFeedServer(t, noValidators, rssDoc())
	rec := &recorder{}
	file := file{
		Defaults: defaults{Labels: map[string]string{"team": "ops", "env": "prod"}, UserAgent: "herald-test/1"},
		Feeds: []feed{{Name: "cves", URL: srv.URL(), Severity: alerts.SeverityWarning, Source: "nvd",
			Labels: map[string]string{"env": "staging", "kind": "security"}}},
	}
	p := newPoller(t, rdb, rec, nil, func(c *Config) { c.File = file })
	wantResult(t, first(p.pollNow(t, "cves")), resultFirst)
	srv.set(rssDoc(numbered(1, 1)...))
	wantResult(t, first(p.pollNow(t, "cves")), resultNew)
	a := rec.all()[0]
	if a.Severity != alerts.SeverityWarning || a.Source != "nvd" {
		t.Fatalf("severity %q source %q, want warning and nvd", a.Severity, a.Source)
	}
	wantLabels := map[string]string{"feed": "cves", "team": "ops", "env": "staging", "kind": "security"}
	if len(a.Labels) != len(wantLabels) {
		t.Fatalf("labels %v, want %v", a.Labels, wantLabels)
	}
	for k, v := range wantLabels {
		if a.Labels[k] != v {
			t.Fatalf("labels %v, want %v", a.Labels, wantLabels)
		}
	}
	srv.mu.Lock()
	ua := srv.userAgents[0]
	srv.mu.Unlock()
	if ua != "herald-test/1" {
		t.Fatalf("User-Agent %q, want the configured one", ua)
	}
}

func TestConditionalGet(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)
	for _, tc := range []struct {
		name             string
		mode             validatorMode
		wantINM, wantIMS bool
	}{
		{"etag", etagOnly, true, false},
		{"last-modified", lastModifiedOnly, false, true},
		{"both", bothValidators, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newFeedServer(t, tc.mode, rssDoc(numbered(1, 3)...))
			rec := &recorder{}
			p := newPoller(t, rdb, rec, []feed{{Name: "cond-" + tc.name, URL: srv.URL()}}, nil)
			name := "cond-" + tc.name

			wantResult(t, first(p.pollNow(t, name)), resultFirst)
			if inm, ims := srv.lastValidators(); inm != "" || ims != "" {
				t.Fatalf("first request sent validators %q %q", inm, ims)
			}
			srv.mu.Lock()
			etag, lm := srv.etag(), srv.lastModified()
			srv.mu.Unlock()

			for i := 0; i < 3; i++ {
				wantResult(t, first(p.pollNow(t, name)), resultNotModified)
				inm, ims := srv.lastValidators()
				if tc.wantINM && inm != etag {
					t.Fatalf("If-None-Match %q, want %q", inm, etag)
				}
				if tc.wantIMS && ims != lm {
					t.Fatalf("If-Modified-Since %q, want %q", ims, lm)
				}
				if !tc.wantINM && inm != "" || !tc.wantIMS && ims != "" {
					t.Fatalf("validators %q %q sent that the server never gave", inm, ims)
				}
			}
			if req, nm := srv.stats(); req != 4 || nm != 3 {
				t.Fatalf("server saw %d requests and answered %d with 304; want 4 and 3", req, nm)
			}

			// A change: 200 with new validators, which the next poll sends.
			srv.set(rssDoc(numbered(1, 4)...))
			wantResult(t, first(p.pollNow(t, name)), resultNew)
			wantResult(t, first(p.pollNow(t, name)), resultNotModified)
			srv.mu.Lock()
			etag, lm = srv.etag(), srv.lastModified()
			srv.mu.Unlock()
			inm, ims := srv.lastValidators()
			if tc.wantINM && inm != etag || tc.wantIMS && ims != lm {
				t.Fatalf("after a change the poller sent %q %q, want the new validators %q %q", inm, ims, etag, lm)
			}
			if got := rec.titles(); !slices.Equal(got, []string{"Item 4"}) {
				t.Fatalf("dispatched %q, want Item 4 only", got)
			}
		})
	}
}

func TestRestartSendsNothingOld(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)
	// No validators: every poll gets the whole feed, so only the seen set
	// keeps old items from being sent again.
	srv := newFeedServer(t, noValidators, rssDoc(numbered(1, 5)...))
	feeds := []feed{{Name: "restart", URL: srv.URL()}}

	rec1 := &recorder{}
	p1 := newPoller(t, rdb, rec1, feeds, nil)
	wantResult(t, first(p1.pollNow(t, "restart")), resultFirst)
	srv.set(rssDoc(numbered(1, 6)...))
	wantResult(t, first(p1.pollNow(t, "restart")), resultNew)

	// A new process on the same Redis.
	rec2 := &recorder{}
	p2 := newPoller(t, rdb, rec2, feeds, nil)
	wantResult(t, first(p2.pollNow(t, "restart")), resultUnchanged)
	if n := len(rec2.all()); n != 0 {
		t.Fatalf("restarted poller sent %d old items: %q", n, rec2.titles())
	}
	srv.set(rssDoc(numbered(1, 7)...))
	wantResult(t, first(p2.pollNow(t, "restart")), resultNew)
	if got := append(rec1.titles(), rec2.titles()...); !slices.Equal(got, []string{"Item 6", "Item 7"}) {
		t.Fatalf("dispatched over both processes %q, want Item 6 then Item 7", got)
	}
}

func TestFailedDispatchRetriesNextPoll(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)
	srv := newFeedServer(t, bothValidators, rssDoc(numbered(1, 2)...))
	rec := &recorder{}
	p := newPoller(t, rdb, rec, []feed{{Name: "retry", URL: srv.URL()}}, nil)
	wantResult(t, first(p.pollNow(t, "retry")), resultFirst)

	// Three new items; the second dispatch fails as when Redis is down.
	srv.set(rssDoc(numbered(1, 5)...))
	rec.setFail(func(n int, a alerts.Alert) error {
		if a.Title == "Item 4" {
			return fmt.Errorf("%w: connection refused", jobs.ErrUnavailable)
		}
		return nil
	})
	out, delay := p.pollNow(t, "retry")
	wantResult(t, out, resultDispatchError)
	if !errors.Is(out.err, jobs.ErrUnavailable) || out.sent != 1 {
		t.Fatalf("outcome %+v, want ErrUnavailable after one item sent", out)
	}
	if delay != defaultInterval {
		t.Fatalf("first failure waits %v, want the interval %v", delay, defaultInterval)
	}
	// The validators were not updated: the next poll gets the whole feed
	// again instead of a 304 that would lose items 4 and 5.
	rec.setFail(nil)
	out, delay = p.pollNow(t, "retry")
	wantResult(t, out, resultNew)
	if delay != defaultInterval {
		t.Fatalf("after a success the wait is %v, want the interval", delay)
	}
	if got := rec.titles(); !slices.Equal(got, []string{"Item 3", "Item 4", "Item 5"}) {
		t.Fatalf("dispatched %q, want items 3, 4, 5 once each", got)
	}
	wantResult(t, first(p.pollNow(t, "retry")), resultNotModified)
}

func TestUndeliverableItems(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)

	t.Run("an invalid alert is recorded and not retried", func(t *testing.T) {
		t.Parallel()
		srv := newFeedServer(t, noValidators, rssDoc())
		rec := &recorder{}
		p := newPoller(t, rdb, rec, []feed{{Name: "invalid", URL: srv.URL()}}, nil)
		wantResult(t, first(p.pollNow(t, "invalid")), resultFirst)
		srv.set(rssDoc(numbered(1, 2)...))
		rec.setFail(func(n int, a alerts.Alert) error {
			if a.Title == "Item 1" {
				return &jobs.ValidationError{Fields: []jobs.FieldError{{Field: "title", Message: "refused"}}}
			}
			return nil
		})
		out, _ := p.pollNow(t, "invalid")
		wantResult(t, out, resultNew)
		if out.skipped[skipInvalid] != 1 || out.sent != 1 {
			t.Fatalf("outcome %+v, want 1 invalid skipped and 1 sent", out)
		}
		wantResult(t, first(p.pollNow(t, "invalid")), resultUnchanged)
		if got := rec.titles(); !slices.Equal(got, []string{"Item 2"}) {
			t.Fatalf("dispatched %q", got)
		}
	})

	t.Run("no route is a failure retried later", func(t *testing.T) {
		t.Parallel()
		srv := newFeedServer(t, noValidators, rssDoc())
		rec := &recorder{}
		p := newPoller(t, rdb, rec, []feed{{Name: "noroute", URL: srv.URL()}}, nil)
		wantResult(t, first(p.pollNow(t, "noroute")), resultFirst)
		srv.set(rssDoc(numbered(1, 1)...))
		rec.setFail(func(int, alerts.Alert) error { return fmt.Errorf("routing: %w", alerts.ErrNoRoute) })
		out, _ := p.pollNow(t, "noroute")
		wantResult(t, out, resultDispatchError)
		if !errors.Is(out.err, alerts.ErrNoRoute) || !strings.Contains(out.err.Error(), "feed=noroute") {
			t.Fatalf("error %v does not say which route to add", out.err)
		}
		rec.setFail(nil)
		wantResult(t, first(p.pollNow(t, "noroute")), resultNew)
	})
}

func TestTooManyNewItemsAreCapped(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)
	srv := newFeedServer(t, noValidators, rssDoc(numbered(1, 1)...))
	rec := &recorder{}
	p := newPoller(t, rdb, rec, []feed{{Name: "burst", URL: srv.URL()}}, func(c *Config) { c.MaxNewPerPoll = 2 })
	wantResult(t, first(p.pollNow(t, "burst")), resultFirst)
	srv.set(rssDoc(numbered(1, 6)...))
	out, _ := p.pollNow(t, "burst")
	wantResult(t, out, resultNew)
	if out.skipped[skipOverflow] != 3 {
		t.Fatalf("skipped %v, want 3 overflow", out.skipped)
	}
	if got := rec.titles(); !slices.Equal(got, []string{"Item 5", "Item 6"}) {
		t.Fatalf("dispatched %q, want the newest two, oldest first", got)
	}
	wantResult(t, first(p.pollNow(t, "burst")), resultUnchanged)
}

func TestSeenSetIsTrimmedButKeepsListedItems(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)
	srv := newFeedServer(t, noValidators, rssDoc(numbered(1, 8)...))
	rec := &recorder{}
	p := newPoller(t, rdb, rec, []feed{{Name: "trim", URL: srv.URL()}}, func(c *Config) { c.SeenLimit = 3 })
	ctx := context.Background()
	wantResult(t, first(p.pollNow(t, "trim")), resultFirst)
	// The feed lists 8 items: all 8 stay remembered despite the limit of 3.
	if n := rdb.ZCard(ctx, keys.FeedSeen("trim")).Val(); n != 8 {
		t.Fatalf("seen set holds %d items, want the 8 listed", n)
	}
	wantResult(t, first(p.pollNow(t, "trim")), resultUnchanged)
	// The feed drops to its 2 newest items plus a new one: the set shrinks
	// to the limit, keeping what is listed.
	srv.set(rssDoc(numbered(7, 9)...))
	wantResult(t, first(p.pollNow(t, "trim")), resultNew)
	if n := rdb.ZCard(ctx, keys.FeedSeen("trim")).Val(); n != 3 {
		t.Fatalf("seen set holds %d items, want 3", n)
	}
	wantResult(t, first(p.pollNow(t, "trim")), resultUnchanged)
	if got := rec.titles(); !slices.Equal(got, []string{"Item 9"}) {
		t.Fatalf("dispatched %q", got)
	}
	if ttl := rdb.PTTL(ctx, keys.FeedSeen("trim")).Val(); ttl <= 0 || ttl > defaultStateTTL {
		t.Fatalf("seen set TTL %v, want at most %v", ttl, defaultStateTTL)
	}
	if ttl := rdb.PTTL(ctx, keys.FeedState("trim")).Val(); ttl <= 0 || ttl > defaultStateTTL {
		t.Fatalf("state TTL %v, want at most %v", ttl, defaultStateTTL)
	}
}

func TestFailuresBackOffAndHonourRetryAfter(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)
	interval := time.Minute
	srv := newFeedServer(t, noValidators, rssDoc(numbered(1, 1)...))
	p := newPoller(t, rdb, &recorder{}, []feed{{Name: "flaky", URL: srv.URL(), Interval: interval}},
		func(c *Config) { c.MaxBackoff = 10 * time.Minute })

	steps := []struct {
		name   string
		status int
		header http.Header
		body   []byte
		result result
		wait   time.Duration
	}{
		{"server error", http.StatusInternalServerError, nil, nil, resultHTTPError, time.Minute},
		{"bad gateway", http.StatusBadGateway, nil, nil, resultHTTPError, 2 * time.Minute},
		{"not a feed", 0, nil, []byte("<html><body>maintenance</body></html>"), resultParseError, 4 * time.Minute},
		{"malformed feed", 0, nil, readFixture(t, "malformed.xml"), resultParseError, 8 * time.Minute},
		{"capped", http.StatusInternalServerError, nil, nil, resultHTTPError, 10 * time.Minute},
		{"retry-after beyond the backoff", http.StatusTooManyRequests, http.Header{"Retry-After": {"3600"}}, nil, resultHTTPError, time.Hour},
		{"success resets", 0, nil, rssDoc(numbered(1, 1)...), resultFirst, time.Minute},
		{"503 with a short retry-after", http.StatusServiceUnavailable, http.Header{"Retry-After": {"5"}}, nil, resultHTTPError, time.Minute},
	}
	for _, st := range steps {
		srv.fail(st.status, st.header)
		if st.body != nil {
			srv.set(st.body)
		}
		out, wait := p.pollNow(t, "flaky")
		if out.result != st.result || wait != st.wait {
			t.Fatalf("%s: result %q wait %v (error %v); want %q and %v", st.name, out.result, wait, out.err, st.result, st.wait)
		}
	}
	if v := value(t, p.metrics.failures.WithLabelValues("flaky")); v != 1 {
		t.Fatalf("consecutive failures gauge %v, want 1", v)
	}
}

func TestLeaseKeepsReplicasApart(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)
	ctx := context.Background()
	srv := newFeedServer(t, noValidators, rssDoc(numbered(1, 2)...))
	feeds := []feed{{Name: "shared", URL: srv.URL()}}
	a := newPoller(t, rdb, &recorder{}, feeds, nil)
	b := newPoller(t, rdb, &recorder{}, feeds, nil)

	// While another replica holds the lease, a poll fetches nothing.
	if ok, err := a.store.acquire(ctx, "shared", "other-", "other-replica", time.Minute); err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	out, wait := b.pollNow(t, "shared")
	wantResult(t, out, resultLeased)
	if wait != defaultInterval {
		t.Fatalf("a leased feed waits %v, want its interval", wait)
	}
	if req, _ := srv.stats(); req != 0 {
		t.Fatalf("the server got %d requests while the feed was leased elsewhere", req)
	}
	// Releasing with the wrong token leaves the other replica's lease.
	if err := b.store.release(ctx, "shared", "not-mine", 0); err != nil {
		t.Fatal(err)
	}
	if v := rdb.Get(ctx, keys.FeedLease("shared")).Val(); v != "other-replica" {
		t.Fatalf("lease value %q after a foreign release", v)
	}
	if err := a.store.release(ctx, "shared", "other-replica", 0); err != nil {
		t.Fatal(err)
	}

	// After a poll, the poller keeps the lease for half the wait, so the
	// replica on the same schedule skips instead of fetching again.
	s := a.slots["shared"]
	out = a.poll(ctx, s.feed)
	wantResult(t, out, resultFirst)
	a.releaseLease(ctx, s.feed, out, a.account(s, out))
	if ttl := rdb.PTTL(ctx, keys.FeedLease("shared")).Val(); ttl <= 0 || ttl > defaultInterval/2 {
		t.Fatalf("lease TTL after the poll %v, want (0, %v]", ttl, defaultInterval/2)
	}
	wantResult(t, first(b.pollNow(t, "shared")), resultLeased)
	if req, _ := srv.stats(); req != 1 {
		t.Fatalf("the server got %d requests, want 1", req)
	}
	// The holder itself is not kept out by the lease it keeps.
	wantResult(t, first(a.pollNow(t, "shared")), resultUnchanged)
	if req, _ := srv.stats(); req != 2 {
		t.Fatalf("the server got %d requests, want 2", req)
	}
}

func TestFixturesDispatchReadableAlerts(t *testing.T) {
	t.Parallel()
	rdb := testRedis(t)
	tests := []struct {
		fixture string
		want    []alerts.Alert // oldest first
	}{
		{"rss2.xml", []alerts.Alert{
			{Title: "Login delays resolved", Body: "Sign-in times are back to normal.",
				URL: "https://status.lighthouse.test/incidents/299", Fingerprint: "feed/fx-rss2/https://status.lighthouse.test/incidents/299"},
			{Title: "Scheduled maintenance of the search cluster", Body: "Search may be slower between 22:00 and 23:00 UTC.",
				URL: "https://status.lighthouse.test/incidents/300", Fingerprint: "feed/fx-rss2/incident-300"},
			{Title: "Elevated error rates on the upload API", Body: "We are investigating elevated error rates for uploads in eu-west.",
				URL: "https://status.lighthouse.test/incidents/301", Fingerprint: "feed/fx-rss2/incident-301"},
		}},
		{"atom1.xml", []alerts.Alert{
			{Title: "Kettle 4.1.3", Body: "Fixes a crash when the cache directory is read-only.",
				URL: "https://code.kettle.test/kettle/releases/v4.1.3", Fingerprint: "feed/fx-atom1/tag:code.kettle.test,2026:release/v4.1.3"},
			{Title: "Kettle 4.2.0", Body: "Parallel test sharding and a faster cache.",
				URL: "https://code.kettle.test/kettle/releases/v4.2.0", Fingerprint: "feed/fx-atom1/tag:code.kettle.test,2026:release/v4.2.0"},
		}},
		{"rss2_html.xml", []alerts.Alert{
			{Title: "An item with neither title nor link nor guid.", Body: "",
				Fingerprint: "feed/fx-rss2_html/sha256:" + hashHex("\x00Wed, 25 Nov 2026 10:00:00 +0000")},
			{Title: "Entity-escaped summary", Body: "Costs fell by 30%\n\nLatency < 10 ms",
				URL: "https://blog.harbor.test/posts/escaped", Fingerprint: "feed/fx-rss2_html/https://blog.harbor.test/posts/escaped"},
			{Title: "Rolling out zero-downtime deploys",
				Body: "We moved every service to rolling deploys.\n\n• No more maintenance windows\n• Faster rollbacks & fewer pages\n\n" +
					"Read the full post.\nThanks to the platform team.\n\nDeploy chart",
				URL: "https://blog.harbor.test/posts/zero-downtime", Fingerprint: "feed/fx-rss2_html/https://blog.harbor.test/posts/zero-downtime"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			t.Parallel()
			name := "fx-" + strings.TrimSuffix(tc.fixture, ".xml")
			srv := newFeedServer(t, etagOnly, rssDoc())
			rec := &recorder{}
			p := newPoller(t, rdb, rec, []feed{{Name: name, URL: srv.URL()}}, nil)
			wantResult(t, first(p.pollNow(t, name)), resultFirst)
			srv.set(readFixture(t, tc.fixture))
			out, _ := p.pollNow(t, name)
			wantResult(t, out, resultNew)
			got := rec.all()
			if len(got) != len(tc.want) {
				t.Fatalf("dispatched %d alerts %q, want %d", len(got), rec.titles(), len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Title != w.Title || g.Body != w.Body || g.URL != w.URL || g.Fingerprint != w.Fingerprint {
					t.Errorf("alert %d:\n got title=%q body=%q url=%q fp=%q\nwant title=%q body=%q url=%q fp=%q",
						i, g.Title, g.Body, g.URL, g.Fingerprint, w.Title, w.Body, w.URL, w.Fingerprint)
				}
				if err := g.Validate(); err != nil {
					t.Errorf("alert %d is invalid: %v", i, err)
				}
				if g.Labels[labelFeed] != name || g.Time.IsZero() {
					t.Errorf("alert %d labels %v time %v", i, g.Labels, g.Time)
				}
			}
			wantResult(t, first(p.pollNow(t, name)), resultNotModified)
		})
	}
}

// first returns the first of two values (a poll's outcome).
func first[A, B any](a A, _ B) A { return a }
