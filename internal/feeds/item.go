package feeds

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mmcdole/gofeed"

	"github.com/herald-dev/herald/internal/alerts"
)

// Lengths of the text taken from an item, in characters.
const (
	maxTitleRunes   = 300
	maxSummaryRunes = 600
)

// entry is one item of a fetched feed with the identity the poller gives it.
type entry struct {
	item *gofeed.Item
	// key identifies the item within its feed: its GUID (Atom id), else its
	// link, else a hash of its title and publication date.
	key string
	// member is the hashed key stored in the feed's seen set.
	member string
	// when is the publication (else update) time, zero when unknown.
	when time.Time
}

// entries gives each item its key, dropping repeated keys (a feed listing
// one item twice) and keeping document order.
func entries(items []*gofeed.Item) []entry {
	out := make([]entry, 0, len(items))
	dup := make(map[string]bool, len(items))
	for _, it := range items {
		if it == nil {
			continue
		}
		k := itemKey(it)
		if dup[k] {
			continue
		}
		dup[k] = true
		e := entry{item: it, key: k, member: hashHex(k)}
		switch {
		case it.PublishedParsed != nil:
			e.when = *it.PublishedParsed
		case it.UpdatedParsed != nil:
			e.when = *it.UpdatedParsed
		}
		out = append(out, e)
	}
	return out
}

// itemKey is the stable identity of an item within its feed.
func itemKey(it *gofeed.Item) string {
	if g := strings.TrimSpace(it.GUID); g != "" {
		return g
	}
	if l := strings.TrimSpace(it.Link); l != "" {
		return l
	}
	return "sha256:" + hashHex(it.Title+"\x00"+it.Published)
}

// hashHex is the first 16 bytes of the SHA-256 of s, in hex.
func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// fingerprint is the alert fingerprint of an item: "feed/<name>/<key>", with
// the key hashed when it would not fit or is not clean text.
func fingerprint(feed, key string) string {
	fp := "feed/" + feed + "/" + key
	if utf8.RuneCountInString(fp) <= alerts.MaxFingerprintLen && printable(key) {
		return fp
	}
	return "feed/" + feed + "/sha256:" + hashHex(key)
}

// oldestFirst orders new items for sending: by date when every one has a
// date, otherwise in reverse document order (feeds list the newest first).
func oldestFirst(es []entry) {
	dated := true
	for _, e := range es {
		if e.when.IsZero() {
			dated = false
			break
		}
	}
	for i, j := 0, len(es)-1; i < j; i, j = i+1, j-1 {
		es[i], es[j] = es[j], es[i]
	}
	if dated {
		sort.SliceStable(es, func(i, j int) bool { return es[i].when.Before(es[j].when) })
	}
}

// toAlert renders one item as an alert of feed fd. base resolves relative
// item links (the feed's own link, else its URL).
func toAlert(fd feed, feedTitle string, base *url.URL, e entry) alerts.Alert {
	it := e.item
	title := shorten(titleText(it.Title), maxTitleRunes)
	body := plainText(it.Description)
	if body == "" {
		body = plainText(it.Content)
	}
	if title == "" {
		title = shorten(strings.Join(strings.Fields(body), " "), maxTitleRunes/3)
	}
	if title == "" {
		name := titleText(feedTitle)
		if name == "" {
			name = fd.Name
		}
		title = shorten("New item in "+name, maxTitleRunes)
	}
	body = shorten(body, maxSummaryRunes)
	if body == title {
		body = ""
	}
	labels := make(map[string]string, len(fd.Labels)+1)
	for k, v := range fd.Labels {
		labels[k] = v
	}
	labels[labelFeed] = fd.Name
	a := alerts.Alert{
		Title:       title,
		Body:        body,
		Severity:    fd.Severity,
		Source:      fd.Source,
		URL:         itemURL(base, it),
		Labels:      labels,
		Fingerprint: fingerprint(fd.Name, e.key),
	}
	if !e.when.IsZero() {
		a.Time = e.when.UTC()
	}
	return a
}

// itemURL is the item's absolute http(s) link, or "".
func itemURL(base *url.URL, it *gofeed.Item) string {
	candidates := append([]string{it.Link}, it.Links...)
	for _, c := range candidates {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		u, err := url.Parse(c)
		if err != nil {
			continue
		}
		if base != nil {
			u = base.ResolveReference(u)
		}
		if (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil {
			if s := u.String(); len(s) <= alerts.MaxURLLen {
				return s
			}
		}
	}
	return ""
}

// feedBase is the URL relative item links resolve against: the feed's own
// link when it is absolute, else the address it was fetched from.
func feedBase(fetched *url.URL, f *gofeed.Feed) *url.URL {
	if f != nil && f.Link != "" {
		if u, err := url.Parse(strings.TrimSpace(f.Link)); err == nil && u.IsAbs() {
			return u
		}
	}
	return fetched
}
