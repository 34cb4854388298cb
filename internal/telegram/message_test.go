package telegram

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// capturedRequest is what the test server saw of one request.
type capturedRequest struct {
	method      string
	path        string
	contentType string
	form        url.Values
}

// captureServer records each request and answers okSendBody.
func captureServer(t *testing.T) (string, <-chan capturedRequest) {
	t.Helper()
	reqs := make(chan capturedRequest, 1)
	srv := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Errorf("ParseForm: %v", err)
		}
		reqs <- capturedRequest{
			method:      r.Method,
			path:        r.URL.Path,
			contentType: r.Header.Get("Content-Type"),
			form:        r.PostForm,
		}
		_, _ = w.Write([]byte(okSendBody))
	})
	return srv.URL, reqs
}

func TestSendFormFields(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		apiPath  string // appended to the server URL to form Config.APIURL
		msg      Message
		wantPath string
		want     url.Values
	}{
		{
			name: "every field set",
			msg: Message{
				Chat:                "-100123",
				Text:                "<b>disk</b> full & rising",
				ParseMode:           "HTML",
				DisableNotification: true,
				ProtectContent:      true,
				MessageThreadID:     77,
				DisableLinkPreview:  true,
			},
			wantPath: "/bot" + testToken + "/sendMessage",
			want: url.Values{
				"chat_id":                  {"-100123"},
				"text":                     {"<b>disk</b> full & rising"},
				"parse_mode":               {"HTML"},
				"disable_notification":     {"true"},
				"protect_content":          {"true"},
				"message_thread_id":        {"77"},
				"disable_web_page_preview": {"true"},
				"link_preview_options":     {`{"is_disabled":true}`},
			},
		},
		{
			name:     "only the required fields",
			msg:      Message{Chat: "@herald_alerts", Text: "plain *text*"},
			wantPath: "/bot" + testToken + "/sendMessage",
			want: url.Values{
				"chat_id": {"@herald_alerts"},
				"text":    {"plain *text*"},
			},
		},
		{
			name:     "MarkdownV2 behind a path prefix with a trailing slash",
			apiPath:  "/tg/",
			msg:      Message{Chat: "0042", Text: `\*bold\*`, ParseMode: "MarkdownV2"},
			wantPath: "/tg/bot" + testToken + "/sendMessage",
			want: url.Values{
				"chat_id":    {"42"},
				"text":       {`\*bold\*`},
				"parse_mode": {"MarkdownV2"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base, reqs := captureServer(t)
			c, _ := newTestClient(t, base+tc.apiPath, 0)
			if _, err := c.Send(context.Background(), slot(t), tc.msg); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := <-reqs
			if got.method != http.MethodPost {
				t.Errorf("method %s, want POST", got.method)
			}
			if got.path != tc.wantPath {
				t.Errorf("path %q, want %q", got.path, tc.wantPath)
			}
			if got.contentType != "application/x-www-form-urlencoded" {
				t.Errorf("Content-Type %q", got.contentType)
			}
			if !reflect.DeepEqual(got.form, tc.want) {
				t.Errorf("form\n got %v\nwant %v", got.form, tc.want)
			}
		})
	}
}

func TestSendRejectsInvalidMessages(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(http.ResponseWriter, *http.Request) {
		t.Error("an invalid message reached the server")
	})
	c, _ := newTestClient(t, srv.URL, 0)

	cases := []struct {
		name  string
		msg   Message
		field string
	}{
		{"empty chat", Message{Text: "hi"}, "Message.Chat"},
		{"chat is a word", Message{Chat: "alerts", Text: "hi"}, "Message.Chat"},
		{"chat zero", Message{Chat: "0", Text: "hi"}, "Message.Chat"},
		{"bare at sign", Message{Chat: "@", Text: "hi"}, "Message.Chat"},
		{"username with a dash", Message{Chat: "@bad-name", Text: "hi"}, "Message.Chat"},
		{"empty text", Message{Chat: "1"}, "Message.Text"},
		{"blank text", Message{Chat: "1", Text: " \n\t"}, "Message.Text"},
		{"legacy Markdown", Message{Chat: "1", Text: "hi", ParseMode: "Markdown"}, "Message.ParseMode"},
		{"negative thread", Message{Chat: "1", Text: "hi", MessageThreadID: -1}, "Message.MessageThreadID"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.Send(context.Background(), slot(t), tc.msg)
			e, ok := AsError(err)
			if !ok {
				t.Fatalf("error %v is not *Error", err)
			}
			if e.Reason != ReasonBadRequest || e.Code != 0 || e.Temporary() {
				t.Errorf("got %#v, want a permanent bad_request with code 0", e)
			}
			if !strings.Contains(e.Description, tc.field) {
				t.Errorf("Description %q does not name %s", e.Description, tc.field)
			}
		})
	}
}
