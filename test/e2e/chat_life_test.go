package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet/fleettest"
)

// routesFile writes a routing file into the test's directory and returns
// the producer setting that loads it.
func routesFile(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "routes.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return "HERALD_ROUTES_FILE=" + path
}

// postAlert posts one alert to a producer and returns the answer's body.
func postAlert(t *testing.T, s *fleettest.Stack, base string, alert map[string]any) string {
	t.Helper()
	body, _ := json.Marshal(alert)
	for {
		code, out := call(t, s.Fleet, http.MethodPost, base+"/v1/alerts", body, nil)
		switch {
		case code == http.StatusAccepted:
			return out
		case code == http.StatusServiceUnavailable || code == 0:
			// A producer restarting or Redis settling: the client retries,
			// which the fingerprint makes safe.
			time.Sleep(100 * time.Millisecond)
		default:
			t.Fatalf("POST /v1/alerts: %d %s", code, out)
		}
	}
}

// TestResolvedAlertsReplyAcrossRestarts is issue 16's thread target: 200
// alerts fire and resolve through two producers and three workers; one
// worker is SIGKILLed and one producer restarted in between. Every
// resolution replies to its alert's firing message. On a route with
// on_resolve: edit, the firing messages are edited and nothing new is sent.
func TestResolvedAlertsReplyAcrossRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	const shards, perShard, edits = 4, 50, 20
	var yaml strings.Builder
	yaml.WriteString("routes:\n")
	for i := range shards {
		fmt.Fprintf(&yaml, "  - name: shard-%d\n    match: {labels: {shard: \"%d\"}}\n    destinations: [\"%d\"]\n", i, i, 9000+i)
	}
	yaml.WriteString("  - name: edits\n    match: {labels: {shard: edit}}\n    on_resolve: edit\n    destinations: [\"9100\"]\n")
	s := fleettest.Start(t, fleettest.Options{Workers: 3, NoProducer: true, Timeout: 4 * time.Minute,
		Fake: telegramfake.Config{TimeScale: scale}})
	env := routesFile(t, yaml.String())
	bases := producers(t, s, 1, env)
	p2, base2, err := s.Fleet.StartProducerProc(s.Ctx, "producer-2", "HERALD_ALERTS_DEFAULT_CHAT="+alertsChat, env)
	if err != nil {
		t.Fatal(err)
	}
	bases = append(bases, base2)

	type alert struct{ key, shard, title string }
	var all []alert
	for i := range shards * perShard {
		all = append(all, alert{fmt.Sprintf("disk-%03d", i), fmt.Sprint(i % shards), fmt.Sprintf("Disk full on db-%03d", i)})
	}
	for i := range edits {
		all = append(all, alert{fmt.Sprintf("cpu-%03d", i), "edit", fmt.Sprintf("CPU hot on app-%03d", i)})
	}
	post := func(i int, a alert, status string) {
		postAlert(t, s, bases[i%2], map[string]any{"title": a.title, "severity": "warning", "status": status,
			"key": a.key, "fingerprint": a.key + "-" + status, "labels": map[string]string{"shard": a.shard}})
	}
	for i, a := range all {
		post(i, a, "firing")
		if i == len(all)/2 {
			// A worker dies mid-burst; another takes its place.
			s.Fleet.Workers[0].Kill()
			if _, err := s.Fleet.StartWorker(s.Ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	// One producer restarts between firing and resolving.
	if err := p2.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p2.Wait(s.Ctx); err != nil {
		t.Fatalf("producer-2 did not stop: %v", err)
	}
	p3, base3, err := s.Fleet.StartProducerProc(s.Ctx, "producer-2b", "HERALD_ALERTS_DEFAULT_CHAT="+alertsChat, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p3.Signal(syscall.SIGTERM) })
	bases[1] = base3
	for i, a := range all {
		post(i, a, "resolved")
	}

	// Every alert of the shards ends with two messages, the resolution a
	// reply; the edit route's messages are edited.
	want := 2 * shards * perShard
	waitFor(t, s.Ctx, "every firing and resolution", func() bool {
		n := 0
		for _, m := range s.Fake.Messages() {
			if m.ChatID >= 9000 && m.ChatID < 9000+shards {
				n++
			}
		}
		return n >= want
	})
	waitFor(t, s.Ctx, "every edit", func() bool { return s.Fake.Stats().Edited >= edits })

	firing := map[string]telegramfake.Message{} // by title
	var replies, notReplies []string
	byID := map[[2]int64]telegramfake.Message{}
	for _, m := range s.Fake.Messages() {
		byID[[2]int64{m.ChatID, int64(m.MessageID)}] = m
	}
	for _, m := range s.Fake.Messages() {
		if m.ChatID < 9000 || m.ChatID >= 9000+shards || m.ReplyTo != nil {
			continue
		}
		for _, a := range all {
			if strings.Contains(m.Text, a.title) {
				firing[a.title] = m
			}
		}
	}
	for _, m := range s.Fake.Messages() {
		if m.ChatID < 9000 || m.ChatID >= 9000+shards || !strings.Contains(strings.ToLower(m.Text), "resolved") {
			continue
		}
		if m.ReplyTo == nil {
			notReplies = append(notReplies, m.Text)
			continue
		}
		target, ok := byID[[2]int64{m.ReplyTo.ChatID, int64(m.ReplyTo.MessageID)}]
		title := ""
		for _, a := range all {
			if strings.Contains(m.Text, a.title) {
				title = a.title
			}
		}
		if !ok || title == "" || !strings.Contains(target.Text, title) {
			notReplies = append(notReplies, m.Text)
			continue
		}
		replies = append(replies, title)
	}
	if len(replies) != shards*perShard || len(notReplies) != 0 {
		t.Errorf("%d of %d resolutions reply to their firing message; %d do not: %q",
			len(replies), shards*perShard, len(notReplies), notReplies[:min(len(notReplies), 3)])
	}
	if len(firing) != shards*perShard {
		t.Errorf("%d alerts have a firing message, want %d", len(firing), shards*perShard)
	}

	var edited int
	for _, m := range s.Fake.Messages() {
		if m.ChatID != 9100 {
			continue
		}
		if m.ReplyTo != nil || !strings.Contains(m.Text, "CPU hot") {
			t.Errorf("edit route got a message that is not a firing one: %q", m.Text)
		}
		cur, _ := s.Fake.Lookup(m.ChatID, m.MessageID)
		if strings.Contains(strings.ToLower(cur.Current().Text), "resolved") {
			edited++
		}
	}
	if n := len(textsTo(s.Fake, "9100")); n != edits || edited != edits {
		t.Errorf("edit route: %d messages, %d edited to the resolution; want %d and %d", n, edited, edits, edits)
	}
	t.Logf("%d resolutions replied to their firing message; %d firing messages edited in place; 429s=%d",
		len(replies), edited, s.Fake.Stats().TooMany)
}

// TestButtonPressesAcknowledgeAndSilence is issue 16's buttons target: a
// press from a user the route does not allow is refused; five
// redeliveries of one Acknowledge press record one acknowledgement and
// one edit; a Silence 1h press silences the alert, whose next firing is
// not sent and is listed with the silence.
func TestButtonPressesAcknowledgeAndSilence(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	const chat = "9300"
	yaml := `routes:
  - name: oncall
    match: {source: cron}
    buttons: [ack, silence_1h]
    allowed_users: ["@alice"]
    destinations: ["` + chat + `"]
`
	s := fleettest.Start(t, fleettest.Options{Workers: 3, NoProducer: true, Updates: true,
		Fake: telegramfake.Config{TimeScale: scale}})
	bases := producers(t, s, 2, routesFile(t, yaml))
	fire := func(base, fp string) string {
		return postAlert(t, s, base, map[string]any{"title": "Backup failed on db-1", "severity": "warning", "source": "cron",
			"key": "backup-db-1", "fingerprint": fp, "labels": map[string]string{"alertname": "BackupFailed", "host": "db-1"}})
	}
	fire(bases[0], "first")
	waitFor(t, s.Ctx, "the alert", func() bool { return len(s.Fake.Messages()) == 1 })
	msg := s.Fake.Messages()[0]
	if msg.ReplyMarkup == nil || len(msg.ReplyMarkup.InlineKeyboard) != 1 || len(msg.ReplyMarkup.InlineKeyboard[0]) != 2 {
		t.Fatalf("the alert's keyboard is %+v, want Acknowledge and Silence 1h", msg.ReplyMarkup)
	}
	data := map[string]string{}
	for _, b := range msg.ReplyMarkup.InlineKeyboard[0] {
		action, _, ok := buttons.ParseData(b.CallbackData)
		if !ok {
			t.Fatalf("button %q carries %q", b.Text, b.CallbackData)
		}
		data[action] = b.CallbackData
	}
	alice := telegramfake.User{ID: 501, FirstName: "Alice", Username: "alice"}
	mallory := telegramfake.User{ID: 666, FirstName: "Mallory", Username: "mallory"}
	answered := func(q telegramfake.CallbackQuery) func() bool {
		return func() bool {
			for _, c := range s.Fake.CallbackQueries(telegramfake.DefaultBot) {
				if c.ID == q.ID {
					return c.Answer != nil
				}
			}
			return false
		}
	}

	// Mallory may not press: refused, with an alert box; nothing changes.
	q, err := s.Fake.Press(telegramfake.DefaultBot, msg.ChatID, msg.MessageID, mallory, data[buttons.Ack])
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, s.Ctx, "the refusal", answered(q))

	// Alice acknowledges; Telegram delivers her press five more times.
	q, err = s.Fake.Press(telegramfake.DefaultBot, msg.ChatID, msg.MessageID, alice, data[buttons.Ack])
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Fake.Redeliver(telegramfake.DefaultBot, q.UpdateID, 5); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s.Ctx, "the acknowledgement on the message", func() bool {
		cur, _ := s.Fake.Lookup(msg.ChatID, msg.MessageID)
		return strings.Contains(cur.Current().Text, "Acknowledged by @alice")
	})
	waitFor(t, s.Ctx, "every delivery of the press to be confirmed", func() bool {
		st, err := s.Fake.Updates(telegramfake.DefaultBot)
		return err == nil && st.Pending == 0
	})
	time.Sleep(time.Second) // room for a wrong second edit to land
	cur, _ := s.Fake.Lookup(msg.ChatID, msg.MessageID)
	if n := strings.Count(cur.Current().Text, "Acknowledged by"); n != 1 {
		t.Errorf("the message shows %d acknowledgements, want 1:\n%s", n, cur.Current().Text)
	}
	if n := len(s.Fake.Edits(msg.ChatID, msg.MessageID)); n != 1 {
		t.Errorf("%d edits of the message, want 1 (the acknowledgement)", n)
	}
	if strings.Contains(cur.Current().Text, "mallory") {
		t.Errorf("Mallory's refused press shows on the message")
	}
	for _, c := range s.Fake.CallbackQueries(telegramfake.DefaultBot) {
		if c.From.Username == "mallory" && (c.Answer == nil || !c.Answer.ShowAlert) {
			t.Errorf("Mallory's press was not refused with an alert: %+v", c.Answer)
		}
	}

	// Alice silences it for an hour.
	q, err = s.Fake.Press(telegramfake.DefaultBot, msg.ChatID, msg.MessageID, alice, data[buttons.Silence1h])
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, s.Ctx, "the silence press answered", answered(q))
	var list struct {
		Silences []struct {
			ID        string `json:"id"`
			CreatedBy string `json:"created_by"`
			State     string `json:"state"`
		} `json:"silences"`
	}
	waitFor(t, s.Ctx, "the silence", func() bool {
		code, body := call(t, s.Fleet, http.MethodGet, bases[1]+"/v1/silences", nil, asAdmin(s.Fleet))
		return code == http.StatusOK && json.Unmarshal([]byte(body), &list) == nil && len(list.Silences) == 1
	})
	sil := list.Silences[0]
	if !strings.Contains(sil.CreatedBy, "alice") {
		t.Errorf("silence created by %q, want Alice", sil.CreatedBy)
	}
	// The alert fires again (through the other producer, within the
	// silences' propagation bound): caught, not sent, listed.
	time.Sleep(1100 * time.Millisecond)
	before := len(s.Fake.Messages())
	if out := fire(bases[1], "second"); !strings.Contains(out, sil.ID) {
		t.Errorf("the second firing's answer %s does not name the silence %s", out, sil.ID)
	}
	code, body := call(t, s.Fleet, http.MethodGet, bases[0]+"/v1/silences/"+sil.ID+"/alerts", nil, asAdmin(s.Fleet))
	if code != http.StatusOK || !strings.Contains(body, "Backup failed on db-1") {
		t.Errorf("the silence's alerts: %d %s", code, body)
	}
	time.Sleep(time.Second)
	if after := len(s.Fake.Messages()); after != before {
		t.Errorf("%d messages sent after the silence, want none", after-before)
	}
}

// TestGrafanaImageArrivesAsPhoto is issue 16's photo target: a Grafana
// alert with an image arrives as a photo with its caption; one whose image
// Telegram cannot take is archived with a reason that says so.
func TestGrafanaImageArrivesAsPhoto(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	s := fleettest.Start(t, fleettest.Options{Workers: 3, NoProducer: true, Fake: telegramfake.Config{TimeScale: scale}})
	bases := producers(t, s, 2)
	grafana := func(title, image string) []byte {
		b, _ := json.Marshal(map[string]any{
			"receiver": "herald", "status": "firing", "title": title,
			"alerts": []map[string]any{{
				"status": "firing", "labels": map[string]string{"alertname": title, "severity": "warning"},
				"annotations": map[string]string{"summary": title + " summary"}, "fingerprint": title,
				"imageURL": image, "startsAt": time.Now().UTC().Format(time.RFC3339),
			}},
		})
		return b
	}
	big := "https://grafana.example/render/huge.png"
	s.Fake.SetPhotoURL(big, telegramfake.PhotoURL{Size: 50 << 20})
	for i, a := range []struct{ title, image string }{{"LatencyHigh", "https://grafana.example/render/latency.png"}, {"HugePanel", big}} {
		if code, out := call(t, s.Fleet, http.MethodPost, bases[i]+"/v1/webhooks/grafana", grafana(a.title, a.image), nil); code != http.StatusAccepted {
			t.Fatalf("grafana webhook: %d %s", code, out)
		}
	}
	waitFor(t, s.Ctx, "the photo", func() bool { return len(s.Fake.Messages()) == 1 })
	m := s.Fake.Messages()[0]
	if m.Photo == nil || m.Photo.URL != "https://grafana.example/render/latency.png" || !strings.Contains(m.Caption, "LatencyHigh") {
		t.Fatalf("got %+v, want the latency panel as a photo with the alert as caption", m)
	}
	waitFor(t, s.Ctx, "the refused photo to be archived", func() bool {
		for _, q := range []string{"critical", "default", "low"} {
			tasks, _ := s.Insp.ListArchivedTasks(q)
			for _, task := range tasks {
				if strings.Contains(task.LastErr, "photo_rejected") {
					return true
				}
			}
		}
		return false
	})
}
