package silences

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp/syntax"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// reviewBody is the security review's silence: 32 matchers of
// ".{0,1000}" 113 times.
func reviewBody() string {
	var ms []string
	for i := 0; i < maxMatchers; i++ {
		ms = append(ms, fmt.Sprintf(`{"name": "l%d", "value": %q, "is_regex": true}`, i, strings.Repeat(".{0,1000}", 113)))
	}
	return `{"matchers": [` + strings.Join(ms, ", ") + `], "duration": "1h"}`
}

// TestReviewPayloadRefused: the review's silence is refused with a 400
// naming each matcher's value and the limit, without compiling any of
// its expressions.
func TestReviewPayloadRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	code, body := call(t, f.st.Handler(), "POST", "/v1/silences", reviewBody())
	if code != http.StatusBadRequest {
		t.Fatalf("%d %s", code, body)
	}
	e := decodeAs[httpapi.ErrorBody](t, body).Error
	if e.Code != httpapi.CodeInvalidField || len(e.Fields) != maxMatchers {
		t.Fatalf("%s", body)
	}
	for i, fe := range e.Fields {
		if fe.Field != fmt.Sprintf("matchers[%d].value", i) || !strings.Contains(fe.Message, "the limit per matcher is 256") ||
			!strings.Contains(fe.Message, "exact value") {
			t.Fatalf("field %d: %+v", i, fe)
		}
	}
	if n := f.st.compiles.Load(); n != 0 {
		t.Fatalf("%d silences compiled", n)
	}
	if size, exact, err := programSize(strings.Repeat(".{0,1000}", 113), defaultMaxMatcherProgram); err != nil || exact || size <= defaultMaxMatcherProgram {
		t.Fatalf("programSize = %d, %v, %v: want an estimate over the limit, not a compilation", size, exact, err)
	}
}

// TestProgramLimits: a matcher over the per-matcher limit, and a silence
// over the per-silence budget, are refused; at the limits they are
// created.
func TestProgramLimits(t *testing.T) {
	t.Parallel()
	ok := Input{Duration: time.Hour, CreatedBy: "ana"}
	cfg := Config{}.WithDefaults()
	fits := largestWithin(t, func(n int) string { return strings.Repeat("(.*)", n) + "x" }, cfg.MaxMatcherProgram)
	half := largestWithin(t, func(n int) string { return strings.Repeat("a*", n) + "x" }, cfg.MaxSilenceProgram/2)
	for _, c := range []struct {
		name     string
		matchers []Matcher
		fields   string
		message  string
	}{
		{"at the matcher limit", []Matcher{re("l", fits)}, "", ""},
		{"over the matcher limit", []Matcher{eq("team", "db"), re("l", fits+"(.*)")}, "matchers[1].value", "the limit per matcher is 256"},
		{"far over it", []Matcher{re("l", "(?:.{0,100}){10}")}, "matchers[0].value", "would compile to about"},
		{"two halves", []Matcher{re("l", half), re("m", half)}, "", ""},
		{"over the silence budget", []Matcher{re("l", half), re("m", half), re("n", "a|b")}, "matchers", "the limit per silence is 256"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := ok
			in.Matchers = c.matchers
			s, err := in.build(t0, cfg)
			var verr *jobs.ValidationError
			switch {
			case c.fields == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.fields == "":
				if s.ProgramSize > cfg.MaxSilenceProgram || s.ProgramSize < cfg.MaxSilenceProgram/2 {
					t.Fatalf("ProgramSize %d", s.ProgramSize)
				}
			case !errors.As(err, &verr) || len(verr.Fields) != 1 || verr.Fields[0].Field != c.fields ||
				!strings.Contains(verr.Fields[0].Message, c.message):
				t.Fatalf("err = %v; want %s: %s", err, c.fields, c.message)
			}
		})
	}
}

// TestEstimateBoundsSize: the estimate that spares compiling a large
// expression is never below the program's real size.
func TestEstimateBoundsSize(t *testing.T) {
	t.Parallel()
	for _, p := range []string{
		"a", "api-.*", "(a|b|c)+", "x{3}", "x{2,5}", "(?:ab){0,7}c", "(?:a{2,3}){2,4}", "((a*)*)*", "(a?){10}b", "[a-z]{3,}",
		"(?i)héllo", "\\pL+\\d{1,3}", "(?:.{0,10}){0,20}", "a{0}", "(?:x|y|){5,}", "^$", "\\bword\\b", "(?s).{1,9}|[^x]{0,4}",
	} {
		re, err := syntax.Parse(anchored(p), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := syntax.Compile(re.Simplify())
		if err != nil {
			t.Fatal(err)
		}
		if est := estimate(re, 1<<20); est < len(prog.Inst) {
			t.Errorf("%q: estimate %d below the size %d", p, est, len(prog.Inst))
		}
	}
}

// TestBroadness: the matchers that match (nearly) every value, and some
// that do not.
func TestBroadness(t *testing.T) {
	t.Parallel()
	broad := []Matcher{
		eq("team", ""), re("source", ".+"), re("source", ".*"), re("team", "(?s).*"), re("team", ".{0,}"), re("team", ".{1,}"),
		re("team", "(?s:.)+"), re("team", "[\\s\\S]+"), re("team", "\\S+"), re("team", "[^,]+"), re("team", "\\PC+"),
		re("team", ".{0,100}"), re("team", "(?:.{0,10}){0,20}"), re("team", "(?:a|.)+"), re("team", ".+|x"), re("team", "(.+)"),
		re("team", "[ -~]+"), re("team", "db|"), re("team", ".{3,}"), re("team", "[^🙂]+"), re("team", "x*.+y?"),
		re("severity", "critical|warning|info"), re("severity", "[a-z]+"), re("team", "(?:[^a]|a)+"),
	}
	narrow := []Matcher{
		eq("team", "db"), re("team", "api-.*"), re("team", ".+-prod"), re("team", "[a-z]+"), re("team", "\\w+"), re("team", "db|web"),
		re("team", ".{1,10}"), re("severity", "warning|critical"), re("team", "[^a]+"), re("team", ".+\\..+"), re("team", "\\d+"),
	}
	for _, m := range broad {
		if why := compiledMatcher(t, m).broadness(); why == "" {
			t.Errorf("%s %q: not found broad", m.Name, m.Value)
		}
	}
	for _, m := range narrow {
		if why := compiledMatcher(t, m).broadness(); why != "" {
			t.Errorf("%s %q: found broad: %s", m.Name, m.Value, why)
		}
	}
}

func compiledMatcher(t *testing.T, m Matcher) *Matcher {
	t.Helper()
	if m.IsRegex {
		r, err := compileMatcher(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		m.re = r
	}
	return &m
}

// TestCatchAllNeedsAll: a silence whose every matcher is broad is refused,
// naming each matcher and "all": true; with "all": true it is created,
// through the API only for a token with the operate scope, and the record
// says so.
func TestCatchAllNeedsAll(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := f.st.Handler()
	const catchAll = `"matchers": [{"name": "source", "value": ".+", "is_regex": true}, {"name": "team", "value": ".*", "is_regex": true}], "duration": "8784h"`
	code, body := call(t, h, "POST", "/v1/silences", `{`+catchAll+`}`)
	e := decodeAs[httpapi.ErrorBody](t, body).Error
	if code != http.StatusBadRequest || len(e.Fields) != 2 || e.Fields[0].Field != "matchers[0].value" || e.Fields[1].Field != "matchers[1].value" ||
		!strings.Contains(e.Fields[0].Message, `add "all": true`) {
		t.Fatalf("%d %s", code, body)
	}
	// One narrow matcher is enough.
	if code, body := call(t, h, "POST", "/v1/silences", `{"matchers": [{"name": "source", "value": ".+", "is_regex": true}, {"name": "team", "value": "db"}], "duration": "1h"}`); code != http.StatusCreated {
		t.Fatalf("narrowed: %d %s", code, body)
	}
	sender := &httpapi.Principal{Name: "ci", Scopes: []httpapi.Scope{httpapi.ScopeSend}}
	code, body = callAs(t, h, sender, "POST", "/v1/silences", `{`+catchAll+`, "all": true}`)
	if code != http.StatusForbidden || !strings.Contains(string(body), "operate") {
		t.Fatalf("all without operate: %d %s", code, body)
	}
	code, body = call(t, h, "POST", "/v1/silences", `{`+catchAll+`, "all": true}`)
	v := decodeAs[view](t, body)
	if code != http.StatusCreated || !v.All {
		t.Fatalf("all with operate: %d %s", code, body)
	}
	if got, err := f.st.Get(context.Background(), v.ID); err != nil || !got.All {
		t.Fatalf("stored: %+v, %v", got, err)
	}
}

// TestCreatedByFromPrincipal: created_by is the token's name; a body that
// names someone else is refused; a request with no principal is refused
// with 403 on every endpoint.
func TestCreatedByFromPrincipal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := f.st.Handler()
	const m = `"matchers": [{"name": "team", "value": "db"}], "duration": "1h"`
	for _, body := range []string{`{` + m + `}`, `{` + m + `, "created_by": "a"}`, `{` + m + `, "created_by": " a "}`} {
		code, b := call(t, h, "POST", "/v1/silences", body)
		if code != http.StatusCreated || decodeAs[view](t, b).CreatedBy != testPrincipal.Name {
			t.Fatalf("%s: %d %s", body, code, b)
		}
	}
	code, b := call(t, h, "POST", "/v1/silences", `{`+m+`, "created_by": "mallory"}`)
	e := decodeAs[httpapi.ErrorBody](t, b).Error
	if code != http.StatusBadRequest || len(e.Fields) != 1 || e.Fields[0].Field != "created_by" ||
		e.Fields[0].Message != `is set by Herald from the token's name "a"; remove it` {
		t.Fatalf("someone else: %d %s", code, b)
	}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/silences", `{` + m + `}`}, {"GET", "/v1/silences", ""}, {"GET", "/v1/silences/x", ""}, {"DELETE", "/v1/silences/x", ""},
	} {
		if code, b := callAs(t, h, nil, c.method, c.path, c.body); code != http.StatusForbidden {
			t.Errorf("%s %s without a principal: %d %s", c.method, c.path, code, b)
		}
	}
	if l, _ := f.st.List(context.Background(), FilterAll); len(l) != 3 {
		t.Fatalf("%d silences", len(l))
	}
}
