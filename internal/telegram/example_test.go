package telegram_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/telegram"
)

func ExampleClient_Send() {
	// A stand-in for api.telegram.org: chat 42 accepts messages, every
	// other chat has blocked the bot.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.FormValue("chat_id") == "42" {
			_, _ = io.WriteString(w, `{"ok":true,"result":{"message_id":7,"chat":{"id":42,"type":"private"}}}`)
			return
		}
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}`)
	}))
	defer api.Close()

	client, err := telegram.New(telegram.Config{Token: "123456:example-token", APIURL: api.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.CloseIdleConnections()
	ctx := context.Background()

	// Every request needs the limiter's grant of a slot for its message.
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		fmt.Println(err)
		return
	}
	defer mr.Close()
	lim, err := ratelimit.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), ratelimit.Config{Bot: ratelimit.Per(30, time.Second)})
	if err != nil {
		fmt.Println(err)
		return
	}
	slot := func(chat, task string) ratelimit.Grant {
		for {
			d, err := lim.Acquire(ctx, ratelimit.Ask{Chat: chat, Queue: "default", TaskID: task})
			if err != nil || d.Kind == ratelimit.Go {
				return d.Grant()
			}
			time.Sleep(d.Wait) // not yet: ask again when the limiter says
		}
	}

	_, err = client.Send(ctx, ratelimit.Grant{}, telegram.Message{Chat: "42", Text: "no slot"})
	fmt.Println(err)

	sent, err := client.Send(ctx, slot("42", "a"), telegram.Message{Chat: "42", Text: "<b>disk full</b>", ParseMode: "HTML"})
	fmt.Printf("sent message %d to chat %d, err=%v\n", sent.MessageID, sent.ChatID, err)

	_, err = client.Send(ctx, slot("43", "b"), telegram.Message{Chat: "43", Text: "hello"})
	if e, ok := telegram.AsError(err); ok {
		fmt.Println(e)
		fmt.Printf("reason=%s temporary=%t ambiguous=%t\n", e.Reason, e.Temporary(), e.Ambiguous)
	}
	// Output:
	// telegram: no slot was granted for this request; nothing was sent
	// sent message 7 to chat 42, err=<nil>
	// telegram: 403 blocked: Forbidden: bot was blocked by the user
	// reason=blocked temporary=false ambiguous=false
}

func ExampleClient_Redact() {
	client, err := telegram.New(telegram.Config{Token: "123456:example-token"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(client.Redact("POST https://api.telegram.org/bot123456:example-token/sendMessage"))
	fmt.Println(client.Redact("token=123456%3Aexample-token"))
	// Output:
	// POST https://api.telegram.org/bot<redacted>/sendMessage
	// token=<redacted>
}
