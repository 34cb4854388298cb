package telegramfake

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

const graphURL = "https://grafana.example/render/d/abc.png"

func TestSendPhotoByURL(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	m := accepted(t, call(s, testToken, "sendPhoto", url.Values{
		"chat_id": {"42"}, "photo": {graphURL}, "caption": {"<b>CPU</b> high"}, "parse_mode": {"HTML"},
		"reply_markup": {keyboard("ack")},
	}))
	if m.Caption != "CPU high" || m.Text != "" || len(m.Photo) != 1 || m.Photo[0].FileID == "" || m.ReplyMarkup == nil {
		t.Fatalf("answer %+v", m)
	}
	rec := s.Messages()[0]
	if !rec.IsPhoto() || rec.Photo.Source != "url" || rec.Photo.URL != graphURL || rec.Caption != "<b>CPU</b> high" ||
		rec.ParseMode != "HTML" || rec.Text != "" || rec.Photo.FileID != m.Photo[0].FileID {
		t.Errorf("record %+v photo %+v", rec, rec.Photo)
	}
	if st := s.Stats(); st.Accepted != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestSendPhotoUpload(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	img := pngBytes(t, 640, 480)
	m := accepted(t, serve(s, multipartRequest(testToken, "sendPhoto",
		map[string]string{"chat_id": "42", "caption": "graph", "reply_parameters": `{"message_id":7,"allow_sending_without_reply":true}`},
		"photo", "graph.png", bytes.NewReader(img))))
	sum := sha256.Sum256(img)
	p := s.Messages()[0].Photo
	if p == nil || p.Source != "upload" || p.Size != int64(len(img)) || p.SHA256 != hex.EncodeToString(sum[:]) ||
		p.Width != 640 || p.Height != 480 || p.ContentType != "image/png" || p.FileName != "photo" {
		t.Fatalf("photo %+v", p)
	}
	if m.Photo[0].Width != 640 || m.Photo[0].Height != 480 {
		t.Errorf("answer sizes %+v", m.Photo)
	}

	// The bot can send it again by its file_id; another bot cannot.
	again := accepted(t, call(s, testToken, "sendPhoto", url.Values{"chat_id": {"43"}, "photo": {p.FileID}}))
	if q := s.Messages()[1].Photo; q.Source != "file_id" || q.FileID != p.FileID || q.SHA256 != p.SHA256 || again.Photo[0].FileID != p.FileID {
		t.Errorf("resent photo %+v", q)
	}

	// attach:// names the part.
	accepted(t, serve(s, multipartRequest(testToken, "sendPhoto", map[string]string{"chat_id": "44", "photo": "attach://pic"},
		"pic", "p.png", bytes.NewReader(img))))
}

func TestSendPhotoFileIDsArePerBot(t *testing.T) {
	t.Parallel()
	cfg := twoBots()
	cfg.Bot, cfg.Private = unlimited, unlimited
	s, _ := newFake(t, cfg)
	m := accepted(t, call(s, tokenAlerts, "sendPhoto", url.Values{"chat_id": {"42"}, "photo": {graphURL}}))
	refused(t, call(s, tokenPages, "sendPhoto", url.Values{"chat_id": {"42"}, "photo": {m.Photo[0].FileID}}),
		http.StatusBadRequest, "Bad Request: wrong file identifier/HTTP URL specified")
}

func TestSendPhotoErrors(t *testing.T) {
	t.Parallel()
	img := pngBytes(t, 8, 8)
	form := func(kv ...string) func() *http.Request {
		return func() *http.Request {
			f := url.Values{"chat_id": {"42"}}
			for i := 0; i+1 < len(kv); i += 2 {
				f.Set(kv[i], kv[i+1])
			}
			r, _ := http.NewRequest(http.MethodPost, "/bot"+testToken+"/sendPhoto", strings.NewReader(f.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return r
		}
	}
	file := func(content func() io.Reader, kv ...string) func() *http.Request {
		return func() *http.Request {
			fields := map[string]string{"chat_id": "42"}
			for i := 0; i+1 < len(kv); i += 2 {
				fields[kv[i]] = kv[i+1]
			}
			return multipartRequest(testToken, "sendPhoto", fields, "photo", "x", content())
		}
	}
	sized := func(n int64) func() io.Reader {
		return func() io.Reader {
			return io.MultiReader(bytes.NewReader(img), io.LimitReader(zeros{}, n-int64(len(img))))
		}
	}
	tests := []struct {
		name string
		req  func() *http.Request
		code int
		desc string
	}{
		{"no photo", form(), 400, "Bad Request: there is no photo in the request"},
		{"attach of no part", form("photo", "attach://nothing"), 400, "Bad Request: there is no photo in the request"},
		{"unknown file_id", form("photo", "AgACnothing"), 400, "Bad Request: wrong file identifier/HTTP URL specified"},
		{"URL without host", form("photo", "https:///x.png"), 400, "Bad Request: wrong file identifier/HTTP URL specified"},
		{"unreachable URL", form("photo", "https://down.example/x.png"), 400, "Bad Request: failed to get HTTP URL content"},
		{"URL of a page", form("photo", "https://html.example/x"), 400, "Bad Request: wrong type of the web page content"},
		{"URL over 5 MB", form("photo", "https://big.example/x.png"), 400, "Bad Request: failed to get HTTP URL content"},
		{"URL of a long strip", form("photo", "https://strip.example/x.png"), 400, "Bad Request: PHOTO_INVALID_DIMENSIONS"},
		{"caption too long", form("photo", graphURL, "caption", strings.Repeat("😀", 513)), 400, "Bad Request: message caption is too long"},
		{"caption bad markup", form("photo", graphURL, "caption", "<b>x", "parse_mode", "HTML"), 400, ""},
		{"reply to nothing", form("photo", graphURL, "reply_to_message_id", "5"), 400, "Bad Request: message to be replied not found"},
		{"not an image", file(func() io.Reader { return strings.NewReader("<html>hello</html>") }), 400, "Bad Request: IMAGE_PROCESS_FAILED"},
		{"empty upload", file(func() io.Reader { return strings.NewReader("") }), 400, "Bad Request: file must be non-empty"},
		{"upload over 10 MB", file(sized(maxPhotoBytes + 1)), 400, "Bad Request: PHOTO_SAVE_FILE_INVALID"},
		{"too wide", file(func() io.Reader { return bytes.NewReader(pngBytes(t, 2100, 100)) }), 400, "Bad Request: PHOTO_INVALID_DIMENSIONS"},
		{"request over 50 MB", file(sized(maxUploadBytes + 1)), 413, "Request Entity Too Large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newFake(t, open())
			s.SetPhotoURL("https://down.example/x.png", PhotoURL{Unreachable: true})
			s.SetPhotoURL("https://html.example/x", PhotoURL{WrongType: true})
			s.SetPhotoURL("https://big.example/x.png", PhotoURL{Size: maxPhotoURLBytes + 1})
			s.SetPhotoURL("https://strip.example/x.png", PhotoURL{Width: 4200, Height: 200})
			r := serve(s, tc.req())
			if tc.desc == "" {
				if r.code != tc.code || !strings.Contains(r.body, "can't parse entities") {
					t.Fatalf("got %d %s", r.code, r.body)
				}
			} else {
				refused(t, r, tc.code, tc.desc)
			}
			if n := len(s.Messages()); n != 0 {
				t.Errorf("%d messages recorded", n)
			}
		})
	}
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// The caption limit counts what the user sees in UTF-16 units, like the
// text limit: 1024 emoji-free characters pass, and markup does not count.
func TestCaptionLimit(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	accepted(t, call(s, testToken, "sendPhoto", url.Values{"chat_id": {"42"}, "photo": {graphURL},
		"caption": {"<b>" + strings.Repeat("a", maxCaptionLen) + "</b>"}, "parse_mode": {"HTML"}}))
	accepted(t, call(s, testToken, "sendPhoto", url.Values{"chat_id": {"43"}, "photo": {graphURL},
		"caption": {strings.Repeat("😀", maxCaptionLen/2)}}))
	s2, _ := newFake(t, Config{Bot: unlimited, Private: unlimited, CountMarkup: true})
	refused(t, call(s2, testToken, "sendPhoto", url.Values{"chat_id": {"42"}, "photo": {graphURL},
		"caption": {"<b>" + strings.Repeat("a", maxCaptionLen) + "</b>"}, "parse_mode": {"HTML"}}),
		http.StatusBadRequest, "Bad Request: message caption is too long")
}

// Photos share sendMessage's flood control and faults.
func TestSendPhotoIsASend(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, Config{})
	accepted(t, send(s, text("42", "text")))
	mustRetryAfter(t, call(s, testToken, "sendPhoto", url.Values{"chat_id": {"42"}, "photo": {graphURL}}))
	clock.Advance(time.Second)
	accepted(t, call(s, testToken, "sendPhoto", url.Values{"chat_id": {"42"}, "photo": {graphURL}}))
	mustRetryAfter(t, send(s, text("42", "too soon after the photo")))

	s.FailNext(1, FaultTooMany)
	clock.Advance(2 * time.Second)
	if r := call(s, testToken, "sendPhoto", url.Values{"chat_id": {"43"}, "photo": {graphURL}}); r.code != http.StatusTooManyRequests {
		t.Errorf("FailNext on a photo: %d", r.code)
	}
	s.FailNext(1, FaultParseEntities)
	if r := call(s, testToken, "sendPhoto", url.Values{"chat_id": {"44"}, "photo": {graphURL}, "caption": {"<b>x</b>"}, "parse_mode": {"HTML"}}); r.code != 400 {
		t.Errorf("FaultParseEntities on a caption: %d", r.code)
	}
	if st := s.Stats(); st.Accepted != 2 || st.Injected != 2 {
		t.Errorf("stats %+v", st)
	}
}
