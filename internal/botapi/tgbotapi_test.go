package botapi_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/herald-dev/herald/internal/telegramfake"
)

// newClient connects the Go Bot API library to the stack's front with the
// Herald credential token: only the endpoint differs from Telegram's.
func (s *stack) newClient(t *testing.T, token string) (*tgbotapi.BotAPI, error) {
	t.Helper()
	return tgbotapi.NewBotAPIWithClient(token, s.url+"/telegram/bot%s/%s", &http.Client{Timeout: 10 * time.Second})
}

// apiError unwraps the library's error.
func apiError(t *testing.T, err error) *tgbotapi.Error {
	t.Helper()
	var e *tgbotapi.Error
	if !errors.As(err, &e) {
		t.Fatalf("want *tgbotapi.Error, got %T: %v", err, err)
	}
	return e
}

// waitFor waits until the fake has n messages and returns them.
func (s *stack) waitFor(t *testing.T, n int) []telegramfake.Message {
	t.Helper()
	if err := s.fake.Wait(s.ctx, n); err != nil {
		t.Fatalf("waiting for %d messages: %v (have %d)", n, err, len(s.fake.Messages()))
	}
	return s.fake.Messages()
}

func TestGoLibrarySendsThroughTheFront(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	bot, err := s.newClient(t, sendToken)
	if err != nil {
		t.Fatalf("NewBotAPI (getMe): %v", err)
	}
	if !bot.Self.IsBot || bot.Self.UserName != "herald_default_bot" || bot.Self.ID == 0 {
		t.Errorf("getMe parsed as %+v", bot.Self)
	}
	cfg := tgbotapi.NewMessage(42, "<b>disk</b> full on db-1")
	cfg.ParseMode = tgbotapi.ModeHTML
	cfg.DisableNotification = true
	cfg.DisableWebPagePreview = true
	cfg.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(
		tgbotapi.NewInlineKeyboardButtonURL("runbook", "https://runbooks.example/disk")))
	msg, err := bot.Send(cfg)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := s.waitFor(t, 1)[0]
	if got.Text != "<b>disk</b> full on db-1" || got.ParseMode != "HTML" || !got.DisableNotification ||
		!got.LinkPreviewDisabled || got.ReplyMarkup == nil || got.ChatID != 42 {
		t.Errorf("the fake got %+v", got)
	}
	// Sent within the answer's wait: the real message_id.
	if msg.MessageID != got.MessageID || msg.Chat.ID != 42 || msg.Chat.Type != "private" ||
		msg.Text != "disk full on db-1" || msg.From == nil || msg.From.ID != bot.Self.ID {
		t.Errorf("the answer parsed as %+v (chat %+v), want message_id %d", msg, msg.Chat, got.MessageID)
	}
	ch, err := bot.Send(tgbotapi.NewMessageToChannel("@herald_alerts", "up"))
	if err != nil {
		t.Fatalf("Send to a channel: %v", err)
	}
	got = s.waitFor(t, 2)[1]
	if !ch.Chat.IsChannel() || ch.Chat.UserName != "herald_alerts" || ch.Chat.ID != got.ChatID || ch.SenderChat == nil ||
		ch.SenderChat.ID != got.ChatID || ch.From != nil || ch.MessageID != got.MessageID {
		t.Errorf("channel post parsed as %+v (chat %+v), the fake sent %+v", ch, ch.Chat, got)
	}
	for series, want := range map[string]string{
		`herald_botapi_requests_total{code="200",method="getMe",token="uptime"}`:       "1",
		`herald_botapi_requests_total{code="200",method="sendMessage",token="uptime"}`: "2",
		`herald_botapi_answers_total{result="sent"}`:                                   "2",
		`herald_botapi_answers_total{result="placeholder"}`:                            "0",
	} {
		if got := s.scrape(t, series); got != want {
			t.Errorf("%s = %q, want %s", series, got, want)
		}
	}
}

// scrape returns the value of one series of the producer's /metrics ("" if
// absent).
func (s *stack) scrape(t *testing.T, series string) string {
	t.Helper()
	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// testPNG is a small PNG image.
func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGoLibrarySendsPhotos(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	bot, err := s.newClient(t, sendToken)
	if err != nil {
		t.Fatal(err)
	}
	data := testPNG(t)
	up := tgbotapi.NewPhoto(43, tgbotapi.FileBytes{Name: "chart.png", Bytes: data})
	up.Caption = "_latency_ p99"
	up.ParseMode = tgbotapi.ModeMarkdownV2
	if _, err := bot.Send(up); err != nil {
		t.Fatalf("upload: %v", err)
	}
	byURL := tgbotapi.NewPhoto(44, tgbotapi.FileURL("https://grafana.example/render/panel.png"))
	byURL.Caption = "panel"
	if _, err := bot.Send(byURL); err != nil {
		t.Fatalf("by URL: %v", err)
	}
	sum := sha256.Sum256(data)
	seen := 0
	for _, m := range s.waitFor(t, 2) {
		switch {
		case m.ChatID == 43 && m.Photo != nil && m.Photo.Source == "upload" && m.Photo.SHA256 == hex.EncodeToString(sum[:]) &&
			m.Caption == "_latency_ p99" && m.ParseMode == "MarkdownV2":
			seen++
		case m.ChatID == 44 && m.Photo != nil && m.Photo.URL == "https://grafana.example/render/panel.png" && m.Caption == "panel":
			seen++
		default:
			t.Errorf("unexpected message %+v (photo %+v)", m, m.Photo)
		}
	}
	if seen != 2 {
		t.Fatalf("%d of 2 photos arrived as sent", seen)
	}
}

func TestGoLibraryGetsTelegramsRefusals(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	if _, err := s.newClient(t, "not-a-herald-credential"); err == nil || apiError(t, err).Code != http.StatusUnauthorized {
		t.Fatalf("unknown credential: %v", err)
	}
	if _, err := s.newClient(t, opsToken); err == nil || apiError(t, err).Code != http.StatusForbidden {
		t.Fatalf("credential without the send scope: %v", err)
	}
	bot, err := s.newClient(t, sendToken)
	if err != nil {
		t.Fatal(err)
	}
	badHTML := tgbotapi.NewMessage(42, "<b>unclosed")
	badHTML.ParseMode = tgbotapi.ModeHTML
	cases := []struct {
		name string
		c    tgbotapi.Chattable
		want string
	}{
		{"empty text", tgbotapi.NewMessage(42, " "), "Bad Request: message text is empty"},
		{"bad HTML", badHTML, "Bad Request: can't parse entities: "},
		{"no such chat", tgbotapi.NewMessageToChannel("not a chat", "x"), "Bad Request: chat not found"},
		{"file_id photo", tgbotapi.NewPhoto(42, tgbotapi.FileID("AgACAgIAAxkBAAIB")), "Bad Request: wrong file identifier/HTTP URL specified"},
		{"document", tgbotapi.NewDocument(42, tgbotapi.FileURL("https://example.org/a.pdf")), "Not Found"},
	}
	for _, c := range cases {
		_, err := bot.Send(c.c)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if e := apiError(t, err); !strings.HasPrefix(e.Message, c.want) {
			t.Errorf("%s: %d %q, want %q", c.name, e.Code, e.Message, c.want)
		}
	}
	// Nothing refused was stored: the one message after them is the only
	// one to arrive.
	if _, err := bot.Send(tgbotapi.NewMessage(42, "after")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if ms := s.waitFor(t, 1); len(ms) != 1 || ms[0].Text != "after" {
		t.Fatalf("the fake got %+v, want only \"after\"", ms)
	}
}
