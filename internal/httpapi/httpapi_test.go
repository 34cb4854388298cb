package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDecodeJSONNamesTheProblem(t *testing.T) {
	t.Parallel()
	type body struct {
		Title string            `json:"title"`
		Count int               `json:"count"`
		Tags  map[string]string `json:"tags"`
	}
	tests := []struct {
		name, ct, in string
		status       int
		code, field  string
	}{
		{"ok", "application/json", `{"title":"a","count":1}`, 0, "", ""},
		{"plus-json", "application/vnd.x+json", `{"title":"a"}`, 0, "", ""},
		{"empty", "", ``, 400, CodeInvalidJSON, ""},
		{"array", "", `[]`, 400, CodeInvalidJSON, ""},
		{"wrong type", "", `{"count":"one"}`, 400, CodeInvalidField, "count"},
		{"wrong nested type", "", `{"tags":{"a":1}}`, 400, CodeInvalidField, "tags"},
		{"unknown field", "", `{"titel":"a"}`, 400, CodeInvalidField, "titel"},
		{"unknown empty key", "", `{"":"a"}`, 400, CodeInvalidField, `""`},
		{"trailing", "", `{"title":"a"} {}`, 400, CodeInvalidJSON, ""},
		{"syntax", "", `{"title":`, 400, CodeInvalidJSON, ""},
		{"too large", "", `{"title":"` + strings.Repeat("x", 200) + `"}`, 413, CodeBodyTooLarge, ""},
		{"content type", "text/plain", `{}`, 415, CodeUnsupportedMedia, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.in))
			if tc.ct != "" {
				r.Header.Set("Content-Type", tc.ct)
			}
			var v body
			err := DecodeJSON(httptest.NewRecorder(), r, 100, &v)
			if tc.status == 0 {
				if err != nil {
					t.Fatalf("DecodeJSON(%s) = %v, want nil", tc.in, err)
				}
				return
			}
			var he *Error
			if !errors.As(err, &he) {
				t.Fatalf("DecodeJSON(%s) = %v, want an *Error", tc.in, err)
			}
			if he.Status != tc.status || he.Code != tc.code {
				t.Fatalf("got %d %s (%s), want %d %s", he.Status, he.Code, he.Message, tc.status, tc.code)
			}
			if tc.field != "" && (len(he.Fields) != 1 || he.Fields[0].Field != tc.field) {
				t.Fatalf("fields %+v, want one naming %q", he.Fields, tc.field)
			}
		})
	}
}

func TestReadBodyLimitAndUnmarshal(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("a", 11)))
	if _, err := ReadBody(httptest.NewRecorder(), r, 10); err == nil || err.(*Error).Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("ReadBody over the limit = %v, want 413", err)
	}
	r = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"a":1,"extra":true}`))
	b, err := ReadBody(httptest.NewRecorder(), r, 100)
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ A int }
	if err := Unmarshal(b, &v); err != nil || v.A != 1 {
		t.Fatalf("Unmarshal tolerating unknown fields: %v %+v", err, v)
	}
	if err := Unmarshal([]byte("  "), &v); err == nil || err.(*Error).Code != CodeInvalidJSON {
		t.Fatalf("Unmarshal of a blank body = %v, want invalid_json", err)
	}
}

func TestRequireToken(t *testing.T) {
	t.Parallel()
	h := RequireToken("s3cret", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	tests := []struct {
		name string
		set  func(*http.Request)
		want int
	}{
		{"bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") }, 204},
		{"bearer lower case", func(r *http.Request) { r.Header.Set("Authorization", "bearer s3cret") }, 204},
		{"basic password", func(r *http.Request) { r.SetBasicAuth("anyone", "s3cret") }, 204},
		{"basic user only", func(r *http.Request) { r.SetBasicAuth("s3cret", "") }, 401},
		{"wrong", func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cre") }, 401},
		{"none", func(*http.Request) {}, 401},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		tc.set(r)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, w.Code, tc.want)
		}
		if w.Code == 401 {
			var eb ErrorBody
			if json.Unmarshal(w.Body.Bytes(), &eb) != nil || eb.Error.Code != CodeUnauthorized || w.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("%s: 401 body %q, want a JSON unauthorized error with WWW-Authenticate", tc.name, w.Body.String())
			}
		}
	}
	if TokenMatches("", "") {
		t.Error("an empty expected token must never match")
	}
}

func TestWriteErrorSetsRetryAfterOn503(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	WriteError(w, Errorf(http.StatusServiceUnavailable, CodeUnavailable, "redis down"))
	if w.Code != 503 || w.Header().Get("Retry-After") != "1" || !strings.Contains(w.Body.String(), `"code":"unavailable"`) {
		t.Fatalf("503 answer: %d %v %s", w.Code, w.Header(), w.Body.String())
	}
}
