package telegramfake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/markup"
)

const botFrom = `"from":{"id":123456,"is_bot":true,"first_name":"Herald Fake","username":"herald_fake_bot"}`

func TestResponseShapes(t *testing.T) {
	t.Parallel()
	badHTML := "<b>unclosed"
	parseErr := markup.Validate(badHTML, markup.HTML)
	if parseErr == nil {
		t.Fatalf("markup.Validate accepted %q; the markup-error case needs invalid HTML", badHTML)
	}

	tests := []struct {
		name  string
		setup func(*Server)
		form  url.Values
		code  int
		want  string
	}{
		{
			name: "private chat",
			form: text("42", "hello"),
			code: http.StatusOK,
			want: `{"ok":true,"result":{"message_id":1,` + botFrom +
				`,"chat":{"id":42,"first_name":"User 42","type":"private"},"date":1700000000,"text":"hello"}}`,
		},
		{
			name: "basic group",
			form: text("-4321", "hi"),
			code: http.StatusOK,
			want: `{"ok":true,"result":{"message_id":1,` + botFrom +
				`,"chat":{"id":-4321,"title":"Group -4321","type":"group"},"date":1700000000,"text":"hi"}}`,
		},
		{
			name: "supergroup topic with options",
			form: url.Values{
				"chat_id": {"-100123"}, "text": {"<b>bold</b> & plain"}, "parse_mode": {"HTML"},
				"message_thread_id": {"7"}, "protect_content": {"true"}, "disable_web_page_preview": {"true"},
			},
			code: http.StatusOK,
			want: `{"ok":true,"result":{"message_id":1,"message_thread_id":7,` + botFrom +
				`,"chat":{"id":-100123,"title":"Supergroup -100123","type":"supergroup"},"date":1700000000,` +
				`"is_topic_message":true,"has_protected_content":true,"text":"bold & plain","link_preview_options":{"is_disabled":true}}}`,
		},
		{
			name: "channel by username",
			form: text("@herald_alerts", "up"),
			code: http.StatusOK,
			want: `{"ok":true,"result":{"message_id":1,"sender_chat":{"id":` + idOf("@herald_alerts") +
				`,"title":"herald_alerts","username":"herald_alerts","type":"channel"},"chat":{"id":` + idOf("@herald_alerts") +
				`,"title":"herald_alerts","username":"herald_alerts","type":"channel"},"date":1700000000,"text":"up"}}`,
		},
		{
			name: "missing chat_id",
			form: url.Values{"text": {"x"}},
			code: http.StatusBadRequest,
			want: `{"ok":false,"error_code":400,"description":"Bad Request: chat_id is empty"}`,
		},
		{
			name: "missing text",
			form: url.Values{"chat_id": {"42"}},
			code: http.StatusBadRequest,
			want: `{"ok":false,"error_code":400,"description":"Bad Request: message text is empty"}`,
		},
		{
			name: "unreadable chat",
			form: text("not-a-chat", "x"),
			code: http.StatusBadRequest,
			want: `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`,
		},
		{
			name: "unknown parse mode",
			form: url.Values{"chat_id": {"42"}, "text": {"x"}, "parse_mode": {"BBCode"}},
			code: http.StatusBadRequest,
			want: `{"ok":false,"error_code":400,"description":"Bad Request: unsupported parse_mode"}`,
		},
		{
			name: "markup error",
			form: url.Values{"chat_id": {"42"}, "text": {badHTML}, "parse_mode": {"HTML"}},
			code: http.StatusBadRequest,
			want: `{"ok":false,"error_code":400,"description":` + jsonString("Bad Request: "+parseErr.Error()) + `}`,
		},
		{
			name: "too long",
			form: text("42", strings.Repeat("a", markup.MaxMessageLen+1)),
			code: http.StatusBadRequest,
			want: `{"ok":false,"error_code":400,"description":"Bad Request: message is too long"}`,
		},
		{
			name:  "blocked",
			setup: func(s *Server) { s.SetChat("42", ChatBehavior{Blocked: true}) },
			form:  text("42", "x"),
			code:  http.StatusForbidden,
			want:  `{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}`,
		},
		{
			name:  "kicked from group",
			setup: func(s *Server) { s.SetChat("-77", ChatBehavior{Kicked: true}) },
			form:  text("-77", "x"),
			code:  http.StatusForbidden,
			want:  `{"ok":false,"error_code":403,"description":"Forbidden: bot was kicked from the group chat"}`,
		},
		{
			name:  "kicked from supergroup",
			setup: func(s *Server) { s.SetChat("-100777", ChatBehavior{Kicked: true}) },
			form:  text("-100777", "x"),
			code:  http.StatusForbidden,
			want:  `{"ok":false,"error_code":403,"description":"Forbidden: bot was kicked from the supergroup chat"}`,
		},
		{
			name:  "chat not found",
			setup: func(s *Server) { s.SetChat("-77", ChatBehavior{NotFound: true, Kicked: true}) },
			form:  text("-77", "x"),
			code:  http.StatusBadRequest,
			want:  `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`,
		},
		{
			name:  "migrated",
			setup: func(s *Server) { s.SetChat("-77", ChatBehavior{MigrateTo: -1001234567890}) },
			form:  text("-77", "x"),
			code:  http.StatusBadRequest,
			want: `{"ok":false,"error_code":400,"description":"Bad Request: group chat was upgraded to a supergroup chat",` +
				`"parameters":{"migrate_to_chat_id":-1001234567890}}`,
		},
		{
			name:  "flood wait",
			setup: func(s *Server) { s.Force429(12 * time.Second) },
			form:  text("42", "x"),
			code:  http.StatusTooManyRequests,
			want:  `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 12","parameters":{"retry_after":12}}`,
		},
		{
			name:  "server error",
			setup: func(s *Server) { s.FailNext(1, FaultServerError) },
			form:  text("42", "x"),
			code:  http.StatusInternalServerError,
			want:  `{"ok":false,"error_code":500,"description":"Internal Server Error"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newFake(t, Config{})
			if tc.setup != nil {
				tc.setup(s)
			}
			got := send(s, tc.form)
			if got.code != tc.code || got.body != tc.want {
				t.Errorf("got %d %s\nwant %d %s", got.code, got.body, tc.code, tc.want)
			}
			if got.contentType != "application/json" {
				t.Errorf("Content-Type %q, want application/json", got.contentType)
			}
		})
	}
}

// jsonString quotes v as a JSON string.
func jsonString(v string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// idOf is the numeric id the fake gives chat.
func idOf(chat string) string {
	ref, err := parseChatRef(chat)
	if err != nil {
		panic(err)
	}
	return strconv.FormatInt(ref.id, 10)
}

func TestGetMeShape(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	got := call(s, testToken, "getMe", nil)
	want := `{"ok":true,"result":{"id":123456,"is_bot":true,"first_name":"Herald Fake","username":"herald_fake_bot",` +
		`"can_join_groups":true,"can_read_all_group_messages":false,"supports_inline_queries":false,` +
		`"can_connect_to_business":false,"has_main_web_app":false}}`
	if got.code != http.StatusOK || got.body != want {
		t.Errorf("got %d %s\nwant %s", got.code, got.body, want)
	}
}

func TestPrivateLimitAnswerShape(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	mustAccept(t, send(s, text("42", "one")))
	got := send(s, text("42", "two"))
	want := `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 1","parameters":{"retry_after":1}}`
	if got.code != http.StatusTooManyRequests || got.body != want {
		t.Errorf("got %d %s\nwant %s", got.code, got.body, want)
	}
}

func TestGatewayPageIsHTML(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	s.FailNext(1, FaultBadGateway)
	got := send(s, text("42", "x"))
	if got.code != http.StatusBadGateway || got.contentType != "text/html" || !strings.HasPrefix(got.body, "<html>") {
		t.Errorf("got %d %q %q, want 502 text/html page", got.code, got.contentType, got.body)
	}
}
