package telegramfake

import (
	"errors"
	"net/http"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// newBot connects the real Bot API library to s.
func newBot(t *testing.T, s *Server, token string) (*tgbotapi.BotAPI, error) {
	t.Helper()
	return tgbotapi.NewBotAPIWithClient(token, s.URL()+"/bot%s/%s", &http.Client{Timeout: 10 * time.Second})
}

// apiError unwraps the library's error type.
func asAPIError(t *testing.T, err error) *tgbotapi.Error {
	t.Helper()
	var e *tgbotapi.Error
	if !errors.As(err, &e) {
		t.Fatalf("want *tgbotapi.Error, got %T: %v", err, err)
	}
	return e
}

func TestRealClientParsesAnswers(t *testing.T) {
	t.Parallel()
	s := startFake(t, Config{Private: per(1, time.Minute)})

	if _, err := newBot(t, s, "999:wrong"); err == nil || asAPIError(t, err).Code != http.StatusUnauthorized {
		t.Fatalf("wrong token: %v", err)
	}
	bot, err := newBot(t, s, testToken)
	if err != nil {
		t.Fatalf("NewBotAPIWithClient: %v", err)
	}
	if bot.Self.ID != 123456 || bot.Self.UserName != defaultBotUsername || !bot.Self.IsBot {
		t.Errorf("getMe parsed as %+v", bot.Self)
	}

	msg, err := bot.Send(tgbotapi.NewMessage(42, "hello"))
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if msg.MessageID != 1 || msg.Chat.ID != 42 || msg.Chat.Type != "private" || msg.From.ID != bot.Self.ID ||
		msg.Text != "hello" || msg.Time().Unix() == 0 {
		t.Errorf("message parsed as %+v", msg)
	}

	_, err = bot.Send(tgbotapi.NewMessage(42, "again"))
	if e := asAPIError(t, err); e.Code != http.StatusTooManyRequests || e.RetryAfter != 60 {
		t.Errorf("chat limit: %+v", e)
	}

	ch, err := bot.Send(tgbotapi.NewMessageToChannel("@herald_alerts", "<i>up</i>"))
	if err != nil {
		t.Fatalf("Send to channel: %v", err)
	}
	if !ch.Chat.IsChannel() || ch.Chat.UserName != "herald_alerts" || ch.SenderChat == nil || ch.From != nil {
		t.Errorf("channel post parsed as %+v", ch)
	}

	s.SetChat("-300", ChatBehavior{MigrateTo: -1003000000000})
	_, err = bot.Send(tgbotapi.NewMessage(-300, "x"))
	if e := asAPIError(t, err); e.Code != http.StatusBadRequest || e.MigrateToChatID != -1003000000000 {
		t.Errorf("migration: %+v", e)
	}

	s.SetChat("77", ChatBehavior{Blocked: true})
	_, err = bot.Send(tgbotapi.NewMessage(77, "x"))
	if e := asAPIError(t, err); e.Code != http.StatusForbidden || e.Message != "Forbidden: bot was blocked by the user" {
		t.Errorf("blocked: %+v", e)
	}

	cfg := tgbotapi.NewMessage(78, "<b>x")
	cfg.ParseMode = tgbotapi.ModeHTML
	_, err = bot.Send(cfg)
	if e := asAPIError(t, err); e.Code != http.StatusBadRequest {
		t.Errorf("bad markup: %+v", e)
	}

	s.Force429(5 * time.Second)
	_, err = bot.Send(tgbotapi.NewMessage(79, "x"))
	if e := asAPIError(t, err); e.RetryAfter != 5 {
		t.Errorf("flood wait: %+v", e)
	}
	s.Force429(0)

	// The gateway page is not JSON: the library reports a decoding error,
	// not an API error, and the client cannot tell what happened.
	s.FailNext(1, FaultBadGateway)
	_, err = bot.Send(tgbotapi.NewMessage(80, "x"))
	var apiErr *tgbotapi.Error
	if err == nil || errors.As(err, &apiErr) {
		t.Errorf("gateway page: %v", err)
	}

	if got := len(s.Messages()); got != 2 {
		t.Errorf("%d messages recorded, want 2", got)
	}
}
