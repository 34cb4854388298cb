package producer_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/producer"
)

func TestBadInput(t *testing.T) {
	t.Parallel()
	const ok = `{"chat":"42","text":"x"}`
	tests := []struct {
		name       string
		req        request
		wantStatus int
		wantCode   string
		wantField  string // field error expected; "" when the body as a whole is wrong
		wantInMsg  string // substring of the field's (or the error's) message
	}{
		{name: "empty body", req: request{body: ``},
			wantStatus: 400, wantCode: httpapi.CodeInvalidJSON, wantInMsg: "empty"},
		{name: "white space only", req: request{body: " \n "},
			wantStatus: 400, wantCode: httpapi.CodeInvalidJSON},
		{name: "not JSON", req: request{body: `chat=42&text=x`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidJSON},
		{name: "truncated JSON", req: request{body: `{"chat":"42","text":"x"`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidJSON},
		{name: "trailing garbage", req: request{body: ok + ` trailing`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidJSON, wantInMsg: "exactly one"},
		{name: "trailing brace", req: request{body: ok + `}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidJSON},
		{name: "two objects", req: request{body: ok + ok},
			wantStatus: 400, wantCode: httpapi.CodeInvalidJSON},
		{name: "array instead of object", req: request{body: `[` + ok + `]`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidJSON, wantInMsg: "JSON object"},
		{name: "string instead of object", req: request{body: `"hello"`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidJSON},
		{name: "null", req: request{body: `null`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "chat"},
		{name: "unknown field", req: request{body: `{"chat_id":"42","text":"x"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "chat_id", wantInMsg: "not a known field"},
		{name: "payload-only field", req: request{body: `{"chat":"42","text":"x","v":2}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "v"},
		{name: "chat as object", req: request{body: `{"chat":{"id":42},"text":"x"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "chat", wantInMsg: "string"},
		{name: "chat as fraction", req: request{body: `{"chat":42.5,"text":"x"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "chat", wantInMsg: "whole number, got a JSON number 42.5"},
		{name: "chat as exponent", req: request{body: `{"chat":4e2,"text":"x"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "chat", wantInMsg: "whole number"},
		{name: "chat number overflowing int64", req: request{body: `{"chat":9223372036854775808,"text":"x"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "chat", wantInMsg: "whole number"},
		{name: "chat number zero", req: request{body: `{"chat":0,"text":"x"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "chat", wantInMsg: "numeric chat id"},
		{name: "chat as bool", req: request{body: `{"chat":true,"text":"x"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "chat", wantInMsg: "got a JSON bool"},
		{name: "duplicate key", req: request{body: `{"chat":"42","text":"x","chat":"43"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "chat", wantInMsg: "more than once"},
		{name: "case-variant duplicate key", req: request{body: `{"chat":"42","CHAT":"43","text":"x"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "CHAT", wantInMsg: `repeats the key "chat"`},
		{name: "case-variant key alone", req: request{body: `{"Chat":"42","text":"x"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "Chat", wantInMsg: `did you mean "chat"`},
		{name: "long s folding to a field", req: request{body: `{"chat":"42","text":"<b>x","par\u017fe_mode":"none"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "par\u017fe_mode", wantInMsg: `did you mean "parse_mode"`},
		{name: "HTML unclosed tag", req: request{body: `{"chat":"42","text":"<b>disk full","parse_mode":"HTML"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "text", wantInMsg: `is not valid HTML, Telegram would refuse it: Can't find end tag corresponding to start tag "b" at byte offset 0`},
		{name: "HTML bare less-than", req: request{body: `{"chat":"42","text":"a < b","parse_mode":"html"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "text", wantInMsg: "&lt;"},
		{name: "MarkdownV2 reserved dot", req: request{body: `{"chat":"42","text":"v1.2","parse_mode":"MarkdownV2"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "text", wantInMsg: `Character '.' is reserved`},
		{name: "text as number", req: request{body: `{"chat":"42","text":12}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "text", wantInMsg: "string"},
		{name: "disable_notification as string", req: request{body: `{"chat":"42","text":"x","disable_notification":"yes"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "disable_notification", wantInMsg: "boolean"},
		{name: "message_thread_id as string", req: request{body: `{"chat":"42","text":"x","message_thread_id":"7"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "message_thread_id", wantInMsg: "whole number"},
		{name: "message_thread_id fractional", req: request{body: `{"chat":"42","text":"x","message_thread_id":7.5}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "message_thread_id", wantInMsg: "whole number"},
		{name: "message_thread_id overflowing", req: request{body: `{"chat":"42","text":"x","message_thread_id":1e40}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "message_thread_id"},
		{name: "missing chat", req: request{body: `{"text":"x"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "chat", wantInMsg: "required"},
		{name: "chat word", req: request{body: `{"chat":"abc","text":"x"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "chat", wantInMsg: `"abc"`},
		{name: "chat short username", req: request{body: `{"chat":"@ab","text":"x"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "chat", wantInMsg: "@username"},
		{name: "chat zero", req: request{body: `{"chat":"0","text":"x"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "chat"},
		{name: "missing text", req: request{body: `{"chat":"42"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "text"},
		{name: "blank text", req: request{body: `{"chat":"42","text":" \n\t "}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "text", wantInMsg: "blank"},
		{
			// 16385 emoji: 16385 runes but 32770 UTF-16 code units.
			name:       "text over the limit in UTF-16 units",
			req:        request{body: `{"chat":"42","text":"` + strings.Repeat("\U0001F525", jobs.DefaultMaxTextLen/2+1) + `"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "text", wantInMsg: "32770 UTF-16 code units",
		},
		{name: "legacy Markdown", req: request{body: `{"chat":"42","text":"x","parse_mode":"Markdown"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "parse_mode", wantInMsg: "MarkdownV2"},
		{name: "unknown parse_mode", req: request{body: `{"chat":"42","text":"x","parse_mode":"bbcode"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "parse_mode", wantInMsg: "HTML"},
		{name: "negative message_thread_id", req: request{body: `{"chat":"42","text":"x","message_thread_id":-4}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "message_thread_id", wantInMsg: "-4"},
		{name: "unknown queue", req: request{body: `{"chat":"42","text":"x","queue":"urgent"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "queue", wantInMsg: "urgent"},
		{name: "idempotency_key too long", req: request{body: `{"chat":"42","text":"x","idempotency_key":"` + strings.Repeat("k", 300) + `"}`},
			wantStatus: 400, wantCode: httpapi.CodeInvalidField, wantField: "idempotency_key", wantInMsg: "256"},
		{name: "body over MaxBodyBytes", req: request{body: `{"chat":"42","text":"` + strings.Repeat("a", 1<<20) + `"}`},
			wantStatus: 413, wantCode: httpapi.CodeBodyTooLarge, wantInMsg: "1048576"},
		{name: "padding after the object over MaxBodyBytes", req: request{body: ok + strings.Repeat(" ", 1<<20)},
			wantStatus: 413, wantCode: httpapi.CodeBodyTooLarge},
		{name: "text/plain", req: request{body: ok, header: hdr("Content-Type", "text/plain")},
			wantStatus: 415, wantCode: httpapi.CodeUnsupportedMedia, wantInMsg: "application/json"},
		{name: "form", req: request{body: ok, header: hdr("Content-Type", "application/x-www-form-urlencoded")},
			wantStatus: 415, wantCode: httpapi.CodeUnsupportedMedia},
		{name: "malformed Content-Type", req: request{body: ok, header: hdr("Content-Type", "application/json; =")},
			wantStatus: 415, wantCode: httpapi.CodeUnsupportedMedia},
		{name: "GET /v1/messages", req: request{method: http.MethodGet},
			wantStatus: 405, wantCode: httpapi.CodeMethodNotAllowed},
		{name: "unknown path", req: request{path: "/v1/nope", body: ok},
			wantStatus: 404, wantCode: httpapi.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, b := newTestAPI(t, nil)
			rec := do(h, tt.req)
			eb := errorBody(t, rec, tt.wantStatus, tt.wantCode)
			fields := fieldMessages(eb)
			msg := eb.Error.Message
			if tt.wantField != "" {
				m, found := fields[tt.wantField]
				if !found {
					t.Fatalf("fields %+v do not name %q", eb.Error.Fields, tt.wantField)
				}
				msg = m
			} else if len(fields) != 0 {
				t.Errorf("unexpected field errors %+v", eb.Error.Fields)
			}
			if !strings.Contains(msg, tt.wantInMsg) {
				t.Errorf("message %q does not contain %q", msg, tt.wantInMsg)
			}
			if tt.wantStatus == http.StatusMethodNotAllowed && rec.Header().Get("Allow") != "POST" {
				t.Errorf("Allow %q, want POST", rec.Header().Get("Allow"))
			}
			b.requireNoTasks(t)
		})
	}
}

func TestMaxBodyBytesConfigured(t *testing.T) {
	t.Parallel()
	h, b := newTestAPI(t, func(c *producer.Config) { c.MaxBodyBytes = 64 })
	small := `{"chat":"42","text":"x"}`
	accepted(t, post(h, small))
	eb := errorBody(t, post(h, `{"chat":"42","text":"`+strings.Repeat("y", 64)+`"}`), http.StatusRequestEntityTooLarge, httpapi.CodeBodyTooLarge)
	if !strings.Contains(eb.Error.Message, "64 bytes") {
		t.Errorf("message %q does not state the limit", eb.Error.Message)
	}
	if n := len(b.taskKeys()); n != 1 {
		t.Fatalf("%d tasks stored, want only the small one", n)
	}
}
