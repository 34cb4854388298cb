package statushook_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/statushook"
)

func TestEventJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 4, 4, 5, 678e6, time.FixedZone("CET", 3600))
	e := statushook.Event{Type: statushook.TypeMessageSent, Timestamp: at, Data: map[string]any{"task_id": "t1", "message_ids": []int{42}}}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"message.sent","timestamp":"2026-01-02T03:04:05.678Z","data":{"message_ids":[42],"task_id":"t1"}}`
	if string(b) != want {
		t.Fatalf("JSON = %s\nwant   %s", b, want)
	}
	b, err = json.Marshal(statushook.Event{Type: statushook.TypeChatBlocked, Timestamp: time.Unix(0, 0)})
	if err != nil || string(b) != `{"type":"chat.blocked","timestamp":"1970-01-01T00:00:00Z","data":{}}` {
		t.Fatalf("JSON of an event without data = %s, %v", b, err)
	}
}

func TestEventRefuses(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name   string
		e      statushook.Event
		reason string
	}{
		{"unknown type", statushook.Event{Type: "message.read", Timestamp: now}, "not one of"},
		{"no timestamp", statushook.Event{Type: statushook.TypeMessageFailed}, "no timestamp"},
		{"data not an object", statushook.Event{Type: statushook.TypeMessageFailed, Timestamp: now, Data: []int{1}}, "JSON object"},
		{"data not encodable", statushook.Event{Type: statushook.TypeMessageFailed, Timestamp: now, Data: map[string]any{"f": func() {}}}, "encoding data"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := json.Marshal(c.e)
			if err == nil || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("Marshal = %v, want an error mentioning %q", err, c.reason)
			}
		})
	}
}
