package telegramfake

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestRemoteRepliesEditsPhotosAndPresses(t *testing.T) {
	t.Parallel()
	cfg := twoBots()
	cfg.Bot, cfg.Private, cfg.Group, cfg.WebhookRetry = unlimited, unlimited, unlimited, time.Millisecond
	s := startFake(t, cfg)
	rm := Remote{URL: s.URL()}
	ctx := context.Background()

	id := sendKeyboard(t, s, tokenAlerts, "42", "alert", "ack")
	accepted(t, call(s, tokenAlerts, "editMessageText", editForm("1", "alert (seen)", "reply_markup", keyboard("ack"))))

	m, ok, err := rm.Lookup(ctx, 42, id)
	if err != nil || !ok || m.Text != "alert" || m.Edited != 1 || m.LastEdit == nil || m.Current().Text != "alert (seen)" ||
		m.ReplyMarkup == nil || m.ReplyMarkup.InlineKeyboard[0][0].CallbackData != "ack" {
		t.Errorf("Lookup %+v %v %v", m, ok, err)
	}
	if _, ok, err := rm.Lookup(ctx, 42, 99); ok || err != nil {
		t.Errorf("Lookup of no message: %v %v", ok, err)
	}
	if edits, err := rm.Edits(ctx, 42, id); err != nil || len(edits) != 1 || edits[0].Text != "alert (seen)" {
		t.Errorf("Edits %+v %v", edits, err)
	}
	if edits, err := rm.Edits(ctx, 42, 99); err != nil || len(edits) != 0 {
		t.Errorf("Edits of no message %+v %v", edits, err)
	}

	q, err := rm.Press(ctx, "alerts", 42, id, alice, "ack")
	if err != nil || q.From.Username != "alice" || q.Bot != "alerts" || q.UpdateID == 0 {
		t.Fatalf("Press %+v %v", q, err)
	}
	if _, err := rm.Press(ctx, "", 42, id, alice, "ack"); err == nil || !strings.Contains(err.Error(), "no bot") {
		t.Errorf("Press without a bot among two: %v", err)
	}
	if _, err := rm.Press(ctx, "alerts", 42, id, alice, "nope"); err == nil {
		t.Error("Press of no button")
	}
	if err := rm.Redeliver(ctx, "alerts", q.UpdateID, 2); err != nil {
		t.Error(err)
	}
	if err := rm.Redeliver(ctx, "alerts", 1, 2); err == nil {
		t.Error("Redeliver of no update")
	}
	st, err := rm.Updates(ctx, "alerts")
	if err != nil || st.Pending != 3 || st.Webhook != "" {
		t.Errorf("Updates %+v %v", st, err)
	}
	if n := len(getUpdates(t, s, tokenAlerts, nil)); n != 3 {
		t.Errorf("getUpdates: %d", n)
	}
	qs, err := rm.CallbackQueries(ctx, "alerts")
	if err != nil || len(qs) != 1 || qs[0].Deliveries != 3 {
		t.Errorf("CallbackQueries %+v %v", qs, err)
	}
	if _, err := rm.CallbackQueries(ctx, "nobody"); err == nil {
		t.Error("CallbackQueries of no bot")
	}

	if err := rm.DeleteMessage(ctx, 42, id); err != nil {
		t.Error(err)
	}
	if err := rm.DeleteMessage(ctx, 42, 99); err == nil {
		t.Error("DeleteMessage of no message")
	}
	if m, _, _ := rm.Lookup(ctx, 42, id); !m.Deleted {
		t.Errorf("not deleted: %+v", m)
	}

	if err := rm.SetPhotoURL(ctx, graphURL, PhotoURL{WrongType: true}); err != nil {
		t.Fatal(err)
	}
	refused(t, call(s, tokenAlerts, "sendPhoto", url.Values{"chat_id": {"42"}, "photo": {graphURL}}), 400,
		"Bad Request: wrong type of the web page content")
	if err := rm.SetPhotoURL(ctx, graphURL, PhotoURL{}); err != nil {
		t.Fatal(err)
	}
	accepted(t, call(s, tokenAlerts, "sendPhoto", url.Values{"chat_id": {"42"}, "photo": {graphURL}}))
	if msgs, _ := rm.MessagesOf(ctx, "alerts", 1); len(msgs) != 1 || msgs[0].Photo == nil || msgs[0].Photo.URL != graphURL {
		t.Errorf("photo record over Remote %+v", msgs)
	}
}
