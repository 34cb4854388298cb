package telegramfake

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// The real Bot API library reads the fake's answers to the methods beyond
// sendMessage: field names and shapes match Telegram's.
func TestRealClientRepliesEditsPhotosAndUpdates(t *testing.T) {
	t.Parallel()
	s := startFake(t, Config{Bot: unlimited, Private: unlimited, Group: unlimited, WebhookRetry: time.Millisecond})
	bot, err := newBot(t, s, testToken)
	if err != nil {
		t.Fatal(err)
	}

	alert := tgbotapi.NewMessage(-100300, "firing")
	alert.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(
		tgbotapi.NewInlineKeyboardButtonData("Acknowledge", "ack:1"),
		tgbotapi.NewInlineKeyboardButtonURL("Open", "https://grafana.example/d/1"),
	))
	firing, err := bot.Send(alert)
	if err != nil {
		t.Fatal(err)
	}
	if firing.ReplyMarkup == nil || firing.ReplyMarkup.InlineKeyboard[0][0].CallbackData == nil ||
		*firing.ReplyMarkup.InlineKeyboard[0][0].CallbackData != "ack:1" {
		t.Errorf("keyboard parsed as %+v", firing.ReplyMarkup)
	}

	resolved := tgbotapi.NewMessage(-100300, "resolved")
	resolved.ReplyToMessageID = firing.MessageID
	reply, err := bot.Send(resolved)
	if err != nil {
		t.Fatal(err)
	}
	if reply.ReplyToMessage == nil || reply.ReplyToMessage.MessageID != firing.MessageID || reply.ReplyToMessage.Text != "firing" {
		t.Errorf("reply parsed as %+v", reply.ReplyToMessage)
	}

	photo := tgbotapi.NewPhoto(-100300, tgbotapi.FileBytes{Name: "graph.png", Bytes: pngBytes(t, 320, 200)})
	photo.Caption = "CPU"
	pm, err := bot.Send(photo)
	if err != nil {
		t.Fatal(err)
	}
	if len(pm.Photo) != 1 || pm.Photo[0].Width != 320 || pm.Caption != "CPU" {
		t.Errorf("photo parsed as %+v", pm)
	}
	byURL, err := bot.Send(tgbotapi.NewPhoto(-100300, tgbotapi.FileURL(graphURL)))
	if err != nil || len(byURL.Photo) != 1 {
		t.Errorf("photo by URL: %+v %v", byURL, err)
	}

	edited, err := bot.Send(tgbotapi.NewEditMessageText(-100300, firing.MessageID, "firing (acknowledged)"))
	if err != nil {
		t.Fatal(err)
	}
	if edited.Text != "firing (acknowledged)" || edited.EditDate == 0 || edited.ReplyMarkup != nil {
		t.Errorf("edit parsed as %+v", edited)
	}
	_, err = bot.Send(tgbotapi.NewEditMessageText(-100300, firing.MessageID, "firing (acknowledged)"))
	if e := asAPIError(t, err); e.Code != http.StatusBadRequest {
		t.Errorf("not modified: %+v", e)
	}

	second, err := bot.Send(alert)
	if err != nil {
		t.Fatal(err)
	}
	q, err := s.Press("", -100300, second.MessageID, alice, "ack:1")
	if err != nil {
		t.Fatal(err)
	}
	ups, err := bot.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 1 || ups[0].UpdateID != q.UpdateID || ups[0].CallbackQuery == nil {
		t.Fatalf("updates %+v", ups)
	}
	cq := ups[0].CallbackQuery
	if cq.ID != q.ID || cq.From.UserName != "alice" || cq.Data != "ack:1" || cq.Message == nil ||
		cq.Message.MessageID != second.MessageID || cq.Message.Chat.ID != -100300 || cq.ChatInstance == "" {
		t.Errorf("callback query parsed as %+v", cq)
	}
	if _, err := bot.Request(tgbotapi.NewCallback(cq.ID, "Acknowledged")); err != nil {
		t.Errorf("answerCallbackQuery: %v", err)
	}
	_, err = bot.Request(tgbotapi.NewCallback(cq.ID, "twice"))
	if e := asAPIError(t, err); e.Code != http.StatusBadRequest {
		t.Errorf("second answer: %+v", e)
	}

	got := make(chan struct{}, 8)
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got <- struct{}{} }))
	defer hook.Close()
	wh, err := tgbotapi.NewWebhook(hook.URL + "/hook")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bot.Request(wh); err != nil {
		t.Fatalf("setWebhook: %v", err)
	}
	info, err := bot.GetWebhookInfo()
	if err != nil || info.URL != hook.URL+"/hook" || !info.IsSet() {
		t.Errorf("webhook info %+v %v", info, err)
	}
	if _, err := s.Press("", -100300, second.MessageID, alice, "ack:1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook post")
	}
	if _, err := bot.Request(tgbotapi.DeleteWebhookConfig{DropPendingUpdates: true}); err != nil {
		t.Errorf("deleteWebhook: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitUntil(ctx, func() bool { st, _ := s.Updates(""); return st.Webhook == "" }); err != nil {
		t.Fatal(err)
	}
}
