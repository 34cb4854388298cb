package inbound_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSilenceCatchesAnInboundPost checks that an inbound post goes through
// the silences like every webhook's alert: a silence on ntfy's topic label
// mutes one topic, the service's answer is the same 200 for both posts,
// and only the other topic's message is delivered.
func TestSilenceCatchesAnInboundPost(t *testing.T) {
	s := startStack(t)
	f := s.Fleet
	code, body := postJSON(t, f.APIBase+"/v1/silences", []byte(`{"matchers":[{"name":"topic","value":"muted"}],"duration":"1h","comment":"inbound test"}`),
		map[string]string{"Authorization": "Bearer " + f.AdminToken})
	if code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("creating the silence: %d %s", code, body)
	}
	for _, topic := range []string{"muted", "open"} {
		req, err := http.NewRequest(http.MethodPut, f.APIBase+"/v1/inbound/ntfy/"+topic, strings.NewReader("backup of "+topic+" failed"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+f.APIToken)
		req.Header.Set("Title", "Backup "+topic)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("ntfy post to %s: %d", topic, resp.StatusCode)
		}
	}
	waitPerChat(t, s.Ctx, s.Fake, []string{"ntfy"}, 1)
	time.Sleep(time.Second) // the muted one would be out by now
	ms := inChat(s.Fake, chats["ntfy"])
	if len(ms) != 1 || !strings.Contains(visible(t, ms[0]), "Backup open") {
		for _, m := range ms {
			t.Logf("delivered: %s", visible(t, m))
		}
		t.Fatalf("%d messages, want only the open topic's", len(ms))
	}
}
