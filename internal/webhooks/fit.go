package webhooks

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/markup"
)

// summaryLen bounds free text copied from a sender (release notes, issue
// bodies, advisory descriptions): a chat message is a pointer to the
// details, not a copy of them.
const summaryLen = 1000

// ellipsis marks text that was shortened.
const ellipsis = "…"

// clip shortens s to at most max characters, ending it with an ellipsis
// when something was cut. Invalid UTF-8 is replaced first.
func clip(s string, max int) string {
	return markup.TruncateRunes(strings.ToValidUTF8(s, "\uFFFD"), max)
}

// oneLine collapses every run of white space (new lines included) into one
// space, for titles.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// firstLine returns the first non-blank line of s.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// webURL returns s when it is an absolute http or https URL short enough
// for an alert, and "" otherwise: a sender's odd link never costs the alert.
func webURL(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > alerts.MaxURLLen {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return s
}

// firstURL returns the first usable URL of the candidates.
func firstURL(candidates ...string) string {
	for _, c := range candidates {
		if u := webURL(c); u != "" {
			return u
		}
	}
	return ""
}

// fingerprint joins parts into an alert fingerprint (or key), replacing it
// by a digest when it would exceed the limit.
func fingerprint(parts ...string) string {
	fp := strings.ToValidUTF8(strings.Join(parts, "/"), "\uFFFD")
	if utf8.RuneCountInString(fp) <= alerts.MaxFingerprintLen {
		return fp
	}
	sum := sha256.Sum256([]byte(fp))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// lines joins the non-empty lines with new lines.
func lines(ls ...string) string {
	out := ls[:0:0]
	for _, l := range ls {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// paragraphs joins the non-empty blocks with blank lines.
func paragraphs(ps ...string) string {
	out := ps[:0:0]
	for _, p := range ps {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n\n")
}

// fitLabels copies labels into a map an alert accepts: empty names are
// dropped, as are empty values (a label without a value is no label, as
// in Prometheus), text is made valid UTF-8 and each value shortened so that name
// and value fit the limit. Too many labels is left to Validate to report.
func fitLabels(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		k = strings.ToValidUTF8(strings.TrimSpace(k), "\uFFFD")
		if k == "" || strings.TrimSpace(v) == "" {
			continue
		}
		room := alerts.MaxLabelLen - utf8.RuneCountInString(k)
		if room < 0 {
			continue
		}
		out[k] = clip(v, room)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// finish makes every alert fit Herald's limits (titles on one line and
// clipped, bodies clipped, unusable URLs and image URLs dropped, labels
// fitted, long fingerprints and keys digested), fills the title when a sender left it blank, and
// validates. The error, if any, names the alert by its index.
func finish(batch []alerts.Alert, fallbackTitle string) *httpapi.Error {
	var fields []jobs.FieldError
	for i := range batch {
		a := &batch[i]
		a.Title = clip(oneLine(a.Title), alerts.MaxTitleLen)
		if a.Title == "" {
			a.Title = fallbackTitle
		}
		a.Body = clip(strings.TrimSpace(a.Body), alerts.MaxBodyLen)
		a.URL = webURL(a.URL)
		a.Labels = fitLabels(a.Labels)
		a.Source = clip(a.Source, alerts.MaxSourceLen)
		if a.Fingerprint != "" {
			a.Fingerprint = fingerprint(a.Fingerprint)
		}
		if a.Key != "" {
			a.Key = fingerprint(a.Key)
		}
		a.ImageURL = webURL(a.ImageURL)
		err := a.Validate()
		var verr *jobs.ValidationError
		switch {
		case errors.As(err, &verr):
			for _, f := range verr.Fields {
				fields = append(fields, jobs.FieldError{Field: fmt.Sprintf("alerts[%d].%s", i, f.Field), Message: f.Message})
			}
		case err != nil:
			fields = append(fields, jobs.FieldError{Field: fmt.Sprintf("alerts[%d]", i), Message: err.Error()})
		}
	}
	if len(fields) > 0 {
		return httpapi.Invalid("the payload gives alerts Herald cannot accept", fields...)
	}
	return nil
}

// sortedPairs renders a map as "k=v, k=v" in key order.
func sortedPairs(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ", ")
}
