package telegramfake

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// multipartBody encodes fields as multipart/form-data, plus one file part
// that sendMessage must ignore.
func multipartBody(t *testing.T, fields map[string]string) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := mw.CreateFormFile("document", "ignored.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write([]byte("file content")); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

func TestBodyEncodings(t *testing.T) {
	t.Parallel()
	path := "/bot" + testToken + "/sendMessage"
	want := Message{
		MessageID: 1, Bot: DefaultBot, BotID: 123456, ChatID: -100555, Text: "*hi*", ParseMode: "MarkdownV2", MessageThreadID: 3,
		DisableNotification: true, ProtectContent: true, LinkPreviewDisabled: true, At: epoch,
	}
	fields := map[string]string{
		"chat_id": "-100555", "text": "*hi*", "parse_mode": "MarkdownV2", "message_thread_id": "3",
		"disable_notification": "true", "protect_content": "1", "link_preview_options": `{"is_disabled":true}`,
		"reply_markup": `{"inline_keyboard":[]}`,
	}

	tests := []struct {
		name    string
		request func() *http.Request
	}{
		{"form", func() *http.Request {
			form := url.Values{}
			for k, v := range fields {
				form.Set(k, v)
			}
			r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
			return r
		}},
		{"json", func() *http.Request {
			body := `{"chat_id":-100555,"text":"*hi*","parse_mode":"MarkdownV2","message_thread_id":3,` +
				`"disable_notification":true,"protect_content":true,"link_preview_options":{"is_disabled":true},` +
				`"reply_markup":{"inline_keyboard":[]},"entities":null}`
			r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			return r
		}},
		{"json with string values", func() *http.Request {
			body := `{"chat_id":"-100555","text":"*hi*","parse_mode":"markdownv2","message_thread_id":"3",` +
				`"disable_notification":"true","protect_content":"true","disable_web_page_preview":"true"}`
			r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			return r
		}},
		{"multipart", func() *http.Request {
			body, ctype := multipartBody(t, fields)
			r := httptest.NewRequest(http.MethodPost, path, body)
			r.Header.Set("Content-Type", ctype)
			return r
		}},
		{"query string", func() *http.Request {
			q := url.Values{}
			for k, v := range fields {
				q.Set(k, v)
			}
			return httptest.NewRequest(http.MethodGet, path+"?"+q.Encode(), nil)
		}},
		{"body overrides query", func() *http.Request {
			q := url.Values{"chat_id": {"999"}, "text": {"from query"}}
			form := url.Values{}
			for k, v := range fields {
				form.Set(k, v)
			}
			r := httptest.NewRequest(http.MethodPost, path+"?"+q.Encode(), strings.NewReader(form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return r
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newFake(t, Config{})
			mustAccept(t, serve(s, tc.request()))
			msgs := s.Messages()
			if len(msgs) != 1 || msgs[0] != want {
				t.Errorf("recorded %+v\nwant [%+v]", msgs, want)
			}
		})
	}
}

func TestBadBodies(t *testing.T) {
	t.Parallel()
	path := "/bot" + testToken + "/sendMessage"
	tests := []struct {
		name, ctype, body string
		code              int
		wantDesc          string
	}{
		{"json not an object", "application/json", `[1,2]`, 400, "Bad Request: can't parse request"},
		{"json truncated", "application/json", `{"chat_id":`, 400, "Bad Request: can't parse request"},
		{"multipart without boundary", "multipart/form-data", "x", 400, "Bad Request: can't parse request"},
		{"unknown type is ignored", "text/plain", "chat_id=42&text=x", 400, "Bad Request: chat_id is empty"},
		{"bad link preview options", "application/x-www-form-urlencoded",
			"chat_id=42&text=x&link_preview_options=nope", 400, "Bad Request: can't parse link preview options JSON object"},
		{"bad thread id", "application/x-www-form-urlencoded",
			"chat_id=42&text=x&message_thread_id=abc", 400, "Bad Request: message thread not found"},
		{"whitespace text", "application/x-www-form-urlencoded", "chat_id=42&text=+++", 400, "Bad Request: message text is empty"},
		{"legacy Markdown", "application/x-www-form-urlencoded", "chat_id=42&text=x&parse_mode=Markdown", 400,
			"Bad Request: unsupported parse_mode"},
		{"herald-only mode name", "application/x-www-form-urlencoded", "chat_id=42&text=x&parse_mode=none", 400,
			"Bad Request: unsupported parse_mode"},
		{"lower-case html", "application/x-www-form-urlencoded", "chat_id=42&text=%3Ci%3Ex%3C%2Fi%3E&parse_mode=html", 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newFake(t, Config{})
			r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(tc.body))
			r.Header.Set("Content-Type", tc.ctype)
			got := serve(s, r)
			if got.code != tc.code {
				t.Fatalf("got %d %s, want %d", got.code, got.body, tc.code)
			}
			if d := decode(t, got); !strings.HasPrefix(d.Description, tc.wantDesc) {
				t.Errorf("description %q, want prefix %q", d.Description, tc.wantDesc)
			}
		})
	}
}
