package httpapi

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/herald-dev/herald/internal/jobs"
)

// benchMessage mirrors the body of POST /v1/messages (producer's
// messageRequest, which this package cannot import).
type benchMessage struct {
	Chat                ChatRef        `json:"chat"`
	Bot                 string         `json:"bot,omitempty"`
	Text                string         `json:"text"`
	ParseMode           string         `json:"parse_mode,omitempty"`
	DisableNotification bool           `json:"disable_notification,omitempty"`
	MessageThreadID     int            `json:"message_thread_id,omitempty"`
	DisableLinkPreview  bool           `json:"disable_link_preview,omitempty"`
	ProtectContent      bool           `json:"protect_content,omitempty"`
	IdempotencyKey      string         `json:"idempotency_key,omitempty"`
	Queue               string         `json:"queue,omitempty"`
	Coalesce            bool           `json:"coalesce,omitempty"`
	Photo               *jobs.Photo    `json:"photo,omitempty"`
	Buttons             *jobs.Keyboard `json:"buttons,omitempty"`
	Thread              *jobs.Thread   `json:"thread,omitempty"`
	CallbackURL         string         `json:"callback_url,omitempty"`
}

// benchBroadcast mirrors the body of POST /v1/broadcasts (broadcast's
// broadcastRequest).
type benchBroadcast struct {
	Bot                 string                       `json:"bot,omitempty"`
	Chats               []ChatRef                    `json:"chats,omitempty"`
	Audience            string                       `json:"audience,omitempty"`
	Text                string                       `json:"text"`
	Values              map[string]map[string]string `json:"values,omitempty"`
	Defaults            map[string]string            `json:"defaults,omitempty"`
	ParseMode           string                       `json:"parse_mode,omitempty"`
	DisableNotification bool                         `json:"disable_notification,omitempty"`
	DisableLinkPreview  bool                         `json:"disable_link_preview,omitempty"`
	ProtectContent      bool                         `json:"protect_content,omitempty"`
	Photo               *jobs.Photo                  `json:"photo,omitempty"`
	Buttons             *jobs.Keyboard               `json:"buttons,omitempty"`
	CallbackURL         string                       `json:"callback_url,omitempty"`
	IdempotencyKey      string                       `json:"idempotency_key,omitempty"`
}

// benchBroadcastBody is a broadcast as the fleet posts one: n chats, each
// with its own text in values.
func benchBroadcastBody(n int) []byte {
	chats := make([]string, n)
	values := make(map[string]map[string]string, n)
	for i := range n {
		chat := strconv.Itoa(100000 + i)
		chats[i] = chat
		values[chat] = map[string]string{"text": "burst message " + chat + ": disk usage above 90% on host-" + strconv.Itoa(i)}
	}
	b, err := json.Marshal(map[string]any{"bot": "default", "chats": chats, "text": "{{text}}", "values": values})
	if err != nil {
		panic(err)
	}
	return b
}

// benchMessageBody is a message with the usual options.
var benchMessageBody = []byte(`{"chat":"-1001234567890","text":"<b>disk usage</b> above 90% on db-3 (/var/lib/postgresql)",` +
	`"parse_mode":"HTML","disable_notification":true,"idempotency_key":"alert-7f3a9c2e-0001","queue":"default",` +
	`"buttons":[[{"text":"Silence 1h","callback_data":"silence:7f3a9c2e:1h"},{"text":"Runbook","url":"https://runbooks.example/disk"}]],` +
	`"thread":{"key":"7f3a9c2e","mode":"reply"}}`)

// BenchmarkCheckKeys checks the keys of a message with the usual options
// and of a broadcast to 300 chats.
func BenchmarkCheckKeys(b *testing.B) {
	benchCheckKeys(b, CheckKeys)
}

// BenchmarkCheckKeysDecoded is BenchmarkCheckKeys as DecodeJSON checks
// the keys of every POST, the body known to be valid JSON.
func BenchmarkCheckKeysDecoded(b *testing.B) {
	benchCheckKeys(b, checkDecodedKeys)
}

func benchCheckKeys(b *testing.B, check func([]byte, any) *jobs.FieldError) {
	for _, bc := range []struct {
		name string
		body []byte
		v    any
	}{
		{"message", benchMessageBody, &benchMessage{}},
		{"broadcast300", benchBroadcastBody(300), &benchBroadcast{}},
	} {
		if err := json.Unmarshal(bc.body, bc.v); err != nil {
			b.Fatalf("%s: %v", bc.name, err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.body)))
			b.ReportAllocs()
			for b.Loop() {
				if fe := check(bc.body, bc.v); fe != nil {
					b.Fatalf("refused: %+v", fe)
				}
			}
		})
	}
}
