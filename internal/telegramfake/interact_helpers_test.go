package telegramfake

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// open is a Config without flood control, for tests of other behaviour.
func open() Config { return Config{Bot: unlimited, Private: unlimited, Group: unlimited} }

// keyboard is the reply_markup JSON of one row of callback buttons, one
// per datum.
func keyboard(data ...string) string {
	var row []map[string]string
	for _, d := range data {
		row = append(row, map[string]string{"text": "press " + d, "callback_data": d})
	}
	b, _ := json.Marshal(map[string]any{"inline_keyboard": [][]map[string]string{row}})
	return string(b)
}

// with returns a copy of form with more fields, given as name, value pairs.
func with(form url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, v := range form {
		out[k] = append([]string(nil), v...)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// sentMessage decodes the Message of a 200 answer.
type sentMessage struct {
	MessageID int `json:"message_id"`
	Chat      struct {
		ID int64 `json:"id"`
	} `json:"chat"`
	Text           string          `json:"text"`
	Caption        string          `json:"caption"`
	EditDate       int64           `json:"edit_date"`
	ReplyMarkup    json.RawMessage `json:"reply_markup"`
	ReplyToMessage *struct {
		MessageID int    `json:"message_id"`
		Text      string `json:"text"`
	} `json:"reply_to_message"`
	Photo []struct {
		FileID string `json:"file_id"`
		Width  int    `json:"width"`
		Height int    `json:"height"`
	} `json:"photo"`
}

// accepted fails the test unless r is a 200 answer and returns its Message.
func accepted(t *testing.T, r reply) sentMessage {
	t.Helper()
	mustAccept(t, r)
	var m sentMessage
	if err := json.Unmarshal(decode(t, r).Result, &m); err != nil {
		t.Fatalf("result is not a Message: %v\n%s", err, r.body)
	}
	return m
}

// refused fails the test unless r is an error answer with code and
// description.
func refused(t *testing.T, r reply, code int, desc string) {
	t.Helper()
	d := decode(t, r)
	if r.code != code || d.OK || d.ErrorCode != code || d.Description != desc {
		t.Fatalf("want %d %q, got %d: %s", code, desc, r.code, r.body)
	}
}

// callJSON posts body as JSON to method with token.
func callJSON(h http.Handler, token, method string, body any) reply {
	b, _ := json.Marshal(body)
	r := httptest.NewRequest(http.MethodPost, "/bot"+token+"/"+method, bytes.NewReader(b))
	r.Header.Set("Content-Type", "application/json")
	return serve(h, r)
}

// multipartRequest builds a multipart request to method with token: the
// fields, and a file part named file holding content (none when file is
// empty).
func multipartRequest(token, method string, fields map[string]string, file, fileName string, content io.Reader) *http.Request {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		for k, v := range fields {
			_ = mw.WriteField(k, v)
		}
		if file != "" {
			fw, err := mw.CreateFormFile(file, fileName)
			if err == nil {
				_, err = io.Copy(fw, content)
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(mw.Close())
	}()
	r := httptest.NewRequest(http.MethodPost, "/bot"+token+"/"+method, pr)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	return r
}

// pngBytes is a PNG image of w×h pixels.
func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.White)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sendKeyboard sends text to chat with a keyboard of callback buttons and
// returns the message id.
func sendKeyboard(t *testing.T, h http.Handler, token, chat, txt string, data ...string) int {
	t.Helper()
	return accepted(t, call(h, token, "sendMessage", with(text(chat, txt), "reply_markup", keyboard(data...)))).MessageID
}

// updatesAnswer decodes a getUpdates answer.
type updatesAnswer []struct {
	UpdateID      int `json:"update_id"`
	CallbackQuery *struct {
		ID           string `json:"id"`
		From         User   `json:"from"`
		ChatInstance string `json:"chat_instance"`
		Data         string `json:"data"`
		Message      *struct {
			MessageID int `json:"message_id"`
			Chat      struct {
				ID int64 `json:"id"`
			} `json:"chat"`
			Text        string          `json:"text"`
			ReplyMarkup json.RawMessage `json:"reply_markup"`
		} `json:"message"`
	} `json:"callback_query"`
}

// ids lists the update ids of an answer.
func (a updatesAnswer) ids() []int {
	out := []int{}
	for _, u := range a {
		out = append(out, u.UpdateID)
	}
	return out
}

// getUpdates calls getUpdates with form and decodes its 200 answer.
func getUpdates(t *testing.T, h http.Handler, token string, form url.Values) updatesAnswer {
	t.Helper()
	r := call(h, token, "getUpdates", form)
	mustAccept(t, r)
	var out updatesAnswer
	if err := json.Unmarshal(decode(t, r).Result, &out); err != nil {
		t.Fatalf("getUpdates result: %v\n%s", err, r.body)
	}
	return out
}

// waitFor waits until cond holds, failing the test after 10 seconds.
func waitFor(t *testing.T, s *Server, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitUntil(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// alice is the user who presses buttons in the tests.
var alice = User{ID: 7001, FirstName: "Alice", Username: "alice"}

// containsAll reports whether s contains every part.
func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
