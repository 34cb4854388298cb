package feeds

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"

	"github.com/herald-dev/herald/internal/alerts"
)

func TestItemKeyAndFingerprint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		item gofeed.Item
		key  string
	}{
		{"guid wins", gofeed.Item{GUID: " urn:1 ", Link: "https://x.test/1", Title: "t"}, "urn:1"},
		{"link without guid", gofeed.Item{Link: "https://x.test/2", Title: "t"}, "https://x.test/2"},
		{"hash of title and date", gofeed.Item{Title: "t", Published: "Mon, 30 Nov 2026 10:00:00 +0000"},
			"sha256:" + hashHex("t\x00Mon, 30 Nov 2026 10:00:00 +0000")},
	} {
		if got := itemKey(&tc.item); got != tc.key {
			t.Errorf("%s: key %q, want %q", tc.name, got, tc.key)
		}
	}
	if got := fingerprint("f", "urn:1"); got != "feed/f/urn:1" {
		t.Errorf("fingerprint %q", got)
	}
	long := "https://x.test/" + strings.Repeat("a", 300)
	if got := fingerprint("f", long); got != "feed/f/sha256:"+hashHex(long) {
		t.Errorf("a long key is not hashed: %q", got)
	}
	if got := fingerprint("f", "tab\tkey"); !strings.HasPrefix(got, "feed/f/sha256:") {
		t.Errorf("a key with control characters is not hashed: %q", got)
	}
	// Repeated keys in one document count once.
	es := entries([]*gofeed.Item{{GUID: "a"}, {GUID: "b"}, {GUID: "a"}, nil})
	if len(es) != 2 {
		t.Fatalf("entries kept %d, want 2", len(es))
	}
}

func TestOldestFirst(t *testing.T) {
	t.Parallel()
	d := func(h int) time.Time { return time.Date(2026, 1, 1, h, 0, 0, 0, time.UTC) }
	keys := func(es []entry) string {
		var s []string
		for _, e := range es {
			s = append(s, e.key)
		}
		return strings.Join(s, ",")
	}
	dated := []entry{{key: "b", when: d(2)}, {key: "c", when: d(3)}, {key: "a", when: d(1)}}
	oldestFirst(dated)
	if got := keys(dated); got != "a,b,c" {
		t.Errorf("dated items ordered %s", got)
	}
	undated := []entry{{key: "3"}, {key: "2", when: d(5)}, {key: "1"}}
	oldestFirst(undated)
	if got := keys(undated); got != "1,2,3" {
		t.Errorf("items without dates ordered %s, want reverse document order", got)
	}
}

func TestToAlert(t *testing.T) {
	t.Parallel()
	fd := feed{Name: "blog", Severity: alerts.SeverityInfo, Source: "feed", Labels: map[string]string{"team": "web"}}
	base, _ := url.Parse("https://blog.test/posts/")
	pub := time.Date(2026, 11, 30, 9, 0, 0, 0, time.FixedZone("CET", 3600))
	for _, tc := range []struct {
		name  string
		item  gofeed.Item
		title string
		body  string
		url   string
	}{
		{"html title and description", gofeed.Item{Title: "<b>Big</b> &amp; news", Description: "<p>Hello <em>there</em></p>", Link: "one"},
			"Big & news", "Hello there", "https://blog.test/posts/one"},
		{"content when no description", gofeed.Item{Title: "T", Content: "<div>From content</div>", Link: "https://other.test/x"},
			"T", "From content", "https://other.test/x"},
		{"no title: body start", gofeed.Item{Description: "Only a body here", GUID: "g"}, "Only a body here", "", ""},
		{"nothing at all", gofeed.Item{GUID: "g"}, "New item in Blog Title", "", ""},
		{"unsafe link dropped", gofeed.Item{Title: "T", Link: "javascript:alert(1)"}, "T", "", ""},
		{"fallback to links", gofeed.Item{Title: "T", Links: []string{"mailto:x@y", "https://ok.test/"}}, "T", "", "https://ok.test/"},
		{"long title shortened", gofeed.Item{Title: strings.Repeat("long ", 200)}, strings.TrimSpace(shorten(strings.TrimSpace(strings.Repeat("long ", 200)), maxTitleRunes)), "", ""},
	} {
		it := tc.item
		it.PublishedParsed = &pub
		e := entries([]*gofeed.Item{&it})[0]
		a := toAlert(fd, "Blog Title", base, e)
		if a.Title != tc.title || a.Body != tc.body || a.URL != tc.url {
			t.Errorf("%s: title %q body %q url %q; want %q %q %q", tc.name, a.Title, a.Body, a.URL, tc.title, tc.body, tc.url)
		}
		if a.Labels["feed"] != "blog" || a.Labels["team"] != "web" || !a.Time.Equal(pub) || a.Time.Location() != time.UTC {
			t.Errorf("%s: labels %v time %v", tc.name, a.Labels, a.Time)
		}
		if err := a.Validate(); err != nil {
			t.Errorf("%s: invalid alert: %v", tc.name, err)
		}
	}
	if fd.Labels["feed"] != "" {
		t.Fatal("toAlert changed the feed's own labels")
	}
}

func TestFixturesParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file  string
		items int
		err   bool
	}{
		{"rss2.xml", 3, false},
		{"atom1.xml", 2, false},
		{"rss2_html.xml", 3, false},
		{"malformed.xml", 0, true},
	} {
		f, err := gofeed.NewParser().Parse(bytes.NewReader(readFixture(t, tc.file)))
		if tc.err {
			if err == nil {
				t.Errorf("%s parsed", tc.file)
			}
			continue
		}
		if err != nil || len(f.Items) != tc.items {
			t.Errorf("%s: %v, %d items; want %d", tc.file, err, len(f.Items), tc.items)
		}
	}
}
