package telegramfake

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Two bots for the tests of several tokens. Their ids are the digits
// before the colon.
const (
	tokenAlerts = "200000001:alerts-secret-AAA"
	tokenPages  = "200000002:pages-secret-BBB"
)

// twoBots is a Config serving the bots "alerts" and "pages".
func twoBots() Config {
	return Config{Tokens: map[string]string{"alerts": tokenAlerts, "pages": tokenPages}}
}

// sendAs posts a sendMessage with token.
func sendAs(h http.Handler, token string, form url.Values) reply {
	return call(h, token, "sendMessage", form)
}

func TestBotsSendInParallelAtFullRate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		rounds int           // how many rounds of one send per bot
		step   time.Duration // clock advance after each round
		chat   func(bot, round int) string
	}{
		// 30 each in one instant, every send to a chat of its own: each
		// bot fills its own 30-a-second window exactly.
		{"30 each in a second to different chats", 30, 0, func(bot, round int) string {
			return strconv.Itoa(1000*(bot+1) + round)
		}},
		// Both bots write to one private chat once a second: the per-chat
		// window is per bot, so neither is refused.
		{"1 a second each to the same private chat", 10, time.Second, func(int, int) string { return "42" }},
		// And to one group, 20 a minute each.
		{"20 a minute each to the same group", 20, 3 * time.Second, func(int, int) string { return "-100900" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, clock := newFake(t, twoBots())
			for round := range tc.rounds {
				for bot, token := range []string{tokenAlerts, tokenPages} {
					mustAccept(t, sendAs(s, token, text(tc.chat(bot, round), "r"+strconv.Itoa(round))))
				}
				clock.Advance(tc.step)
			}
			st := s.Stats()
			if st.TooMany != 0 || st.Accepted != int64(2*tc.rounds) {
				t.Errorf("totals %+v", st)
			}
			for _, name := range []string{"alerts", "pages"} {
				if bs := st.Bots[name]; bs.TooMany != 0 || bs.Accepted != int64(tc.rounds) {
					t.Errorf("bot %s: %+v", name, bs)
				}
			}
		})
	}
}

func TestBotLimitIsPerBot(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, twoBots())
	for i := range 30 {
		mustAccept(t, sendAs(s, tokenAlerts, text(strconv.Itoa(100+i), "x")))
	}
	if retry := mustRetryAfter(t, sendAs(s, tokenAlerts, text("200", "31st"))); retry != 1 {
		t.Errorf("retry_after %d, want 1", retry)
	}
	// The other bot's next send, in the same instant and even to a chat
	// the first bot just wrote to, is its first of the second.
	mustAccept(t, sendAs(s, tokenPages, text("100", "pages' first")))
	// The first bot stays inside its announced wait; the second does not
	// notice it.
	clock.Advance(500 * time.Millisecond)
	mustRetryAfter(t, sendAs(s, tokenAlerts, text("201", "inside")))
	mustAccept(t, sendAs(s, tokenPages, text("101", "pages' second")))

	st := s.Stats()
	alerts, pages := st.Bots["alerts"], st.Bots["pages"]
	if alerts.TooManyBot != 2 || alerts.InsideWait != 1 || alerts.InsideWaitBot != 1 || alerts.Accepted != 30 {
		t.Errorf("alerts %+v", alerts)
	}
	if pages.TooMany != 0 || pages.InsideWait != 0 || pages.Accepted != 2 {
		t.Errorf("pages %+v", pages)
	}
	if st.TooManyBot != 2 || st.TooMany != 2 || st.InsideWait != 1 || st.Accepted != 32 {
		t.Errorf("totals %+v", st)
	}
}

func TestFloodWaitOfOneBotSparesTheOther(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// wait puts the bot alerts into a flood wait covering chat 42.
		wait func(t *testing.T, s *Server)
		// counted reads the alerts counter the wait is charged to.
		counted func(Stats) int64
	}{
		{"chat wait", func(t *testing.T, s *Server) {
			mustAccept(t, sendAs(s, tokenAlerts, text("42", "a")))
			mustRetryAfter(t, sendAs(s, tokenAlerts, text("42", "announces")))
		}, func(st Stats) int64 { return st.TooManyByChat["42"] }},
		{"bot wait", func(t *testing.T, s *Server) {
			for i := range 30 {
				mustAccept(t, sendAs(s, tokenAlerts, text(strconv.Itoa(500+i), "a")))
			}
			mustRetryAfter(t, sendAs(s, tokenAlerts, text("600", "announces")))
		}, func(st Stats) int64 { return st.TooManyBot }},
		{"Force429 on one bot", func(t *testing.T, s *Server) {
			s.Force429(time.Minute, "alerts")
			if retry := mustRetryAfter(t, sendAs(s, tokenAlerts, text("41", "announces"))); retry != 60 {
				t.Errorf("retry_after %d, want 60", retry)
			}
		}, func(st Stats) int64 { return st.TooManyFlood }},
		{"Force429 by bot id", func(t *testing.T, s *Server) {
			s.Force429(time.Minute, "200000001")
			mustRetryAfter(t, sendAs(s, tokenAlerts, text("41", "announces")))
		}, func(st Stats) int64 { return st.TooManyFlood }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newFake(t, twoBots())
			tc.wait(t, s)
			mustRetryAfter(t, sendAs(s, tokenAlerts, text("42", "inside alerts' wait")))
			mustAccept(t, sendAs(s, tokenPages, text("42", "pages is not waiting")))
			mustAccept(t, call(s, tokenPages, "getMe", nil))

			st := s.Stats()
			if got := tc.counted(st.Bots["alerts"]); got != 2 {
				t.Errorf("alerts counted %d 429s for the wait, want 2: %+v", got, st.Bots["alerts"])
			}
			if in := st.Bots["alerts"].InsideWait; in != 1 {
				t.Errorf("alerts InsideWait %d, want 1", in)
			}
			if p := st.Bots["pages"]; p.TooMany != 0 || p.InsideWait != 0 || p.Accepted != 1 {
				t.Errorf("pages %+v", p)
			}
		})
	}
}

func TestForce429WithoutSelectorHoldsEveryBot(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, twoBots())
	s.Force429(10 * time.Second)
	for _, token := range []string{tokenAlerts, tokenPages, tokenAlerts, tokenPages} {
		mustRetryAfter(t, sendAs(s, token, text("42", "x")))
	}
	st := s.Stats()
	// Each bot's wait is announced by its own first 429.
	for _, name := range []string{"alerts", "pages"} {
		if b := st.Bots[name]; b.TooManyFlood != 2 || b.InsideWait != 1 || b.InsideWaitBot != 1 {
			t.Errorf("%s %+v", name, b)
		}
	}
	if st.TooManyFlood != 4 || st.InsideWait != 2 {
		t.Errorf("totals %+v", st)
	}
	// Ending it for one bot leaves the other waiting.
	s.Force429(0, "pages")
	mustAccept(t, sendAs(s, tokenPages, text("42", "pages")))
	mustRetryAfter(t, sendAs(s, tokenAlerts, text("43", "alerts")))
	clock.Advance(10 * time.Second)
	mustAccept(t, sendAs(s, tokenAlerts, text("43", "alerts")))
}

func TestRecordsAndStatsByBot(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, twoBots())
	mustAccept(t, sendAs(s, tokenAlerts, text("42", "a1")))
	got := sendAs(s, tokenPages, text("42", "p1"))
	mustAccept(t, got)
	mustAccept(t, sendAs(s, tokenAlerts, text("-100900", "a2")))
	mustRetryAfter(t, sendAs(s, tokenPages, text("42", "p2")))

	// The answer names the bot that sent it.
	var sent struct {
		MessageID int      `json:"message_id"`
		From      userJSON `json:"from"`
	}
	if err := json.Unmarshal(decode(t, got).Result, &sent); err != nil {
		t.Fatal(err)
	}
	if sent.From.ID != 200000002 || sent.From.Username != "herald_pages_bot" || sent.MessageID != 2 {
		t.Errorf("pages' message %+v; want it from pages, second in chat 42", sent)
	}

	all := s.Messages()
	if len(all) != 3 {
		t.Fatalf("Messages: %+v", all)
	}
	for _, tc := range []struct {
		bot   string
		texts []string
	}{
		{"alerts", []string{"a1", "a2"}},
		{"pages", []string{"p1"}},
		{"200000002", []string{"p1"}}, // by id
		{"nobody", nil},
		{tokenPages, nil}, // never by token
	} {
		var texts []string
		for _, m := range s.MessagesOf(tc.bot) {
			texts = append(texts, m.Text)
			if want := map[string]int64{"alerts": 200000001, "pages": 200000002}[m.Bot]; m.BotID != want {
				t.Errorf("%s: message %+v has bot id %d, want %d", tc.bot, m, m.BotID, want)
			}
		}
		if !slices.Equal(texts, tc.texts) {
			t.Errorf("MessagesOf(%q) = %q, want %q", tc.bot, texts, tc.texts)
		}
	}

	st := s.Stats()
	if len(st.Bots) != 2 || st.Bots["alerts"].Accepted != 2 || st.Bots["pages"].Accepted != 1 ||
		st.Bots["pages"].TooManyByChat["42"] != 1 || len(st.Bots["alerts"].TooManyByChat) != 0 ||
		st.Bots["alerts"].Requests != 2 || st.Bots["pages"].Requests != 2 {
		t.Errorf("by bot %+v", st.Bots)
	}
	if st.Requests != 4 || st.Accepted != 3 || st.TooManyByChat["42"] != 1 {
		t.Errorf("totals %+v", st)
	}

	// The stats endpoint keeps its top-level fields and adds "bots".
	rep := serve(s.Handler(), newGet("/fake/stats"))
	var body struct {
		Accepted int64                      `json:"accepted"`
		Messages int                        `json:"messages"`
		Bots     map[string]json.RawMessage `json:"bots"`
	}
	if err := json.Unmarshal([]byte(rep.body), &body); err != nil {
		t.Fatal(err)
	}
	if body.Accepted != 3 || body.Messages != 3 || len(body.Bots) != 2 ||
		!strings.Contains(string(body.Bots["pages"]), `"too_many":1,`) || strings.Contains(string(body.Bots["pages"]), `"bots"`) {
		t.Errorf("/fake/stats %s", rep.body)
	}
	for _, tc := range []struct {
		query string
		code  int
		n     int
	}{
		{"?bot=alerts", 200, 2},
		{"?bot=alerts&since=1", 200, 1},
		{"?bot=200000002", 200, 1},
		{"?since=2", 200, 1},
		{"?bot=nobody", 400, 0},
		{"?bot=", 400, 0},
	} {
		r := serve(s.Handler(), newGet("/fake/messages"+tc.query))
		var msgs []Message
		if r.code != tc.code || (tc.code == 200 && (json.Unmarshal([]byte(r.body), &msgs) != nil || len(msgs) != tc.n)) {
			t.Errorf("GET /fake/messages%s: %d %s, want %d with %d messages", tc.query, r.code, r.body, tc.code, tc.n)
		}
	}
}

func TestGetMeByBot(t *testing.T) {
	t.Parallel()
	cfg := twoBots()
	cfg.Token = testToken
	cfg.Tokens["odd name!"] = "300000003:x"
	s, _ := newFake(t, cfg)
	tests := []struct {
		token, username, firstName string
		id                         int64
	}{
		{testToken, defaultBotUsername, defaultBotName, 123456},
		{tokenAlerts, "herald_alerts_bot", "Herald Fake alerts", 200000001},
		{tokenPages, "herald_pages_bot", "Herald Fake pages", 200000002},
		{"300000003:x", "herald_odd_name_bot", "Herald Fake odd name!", 300000003},
	}
	for _, tc := range tests {
		var me botUserJSON
		if err := json.Unmarshal(decode(t, call(s, tc.token, "getMe", nil)).Result, &me); err != nil {
			t.Fatal(err)
		}
		if me.ID != tc.id || me.Username != tc.username || me.FirstName != tc.firstName || !me.IsBot {
			t.Errorf("getMe of bot %d: %+v", tc.id, me)
		}
	}
	want := []botInfo{
		{"alerts", 200000001, "herald_alerts_bot"},
		{DefaultBot, 123456, defaultBotUsername},
		{"odd name!", 300000003, "herald_odd_name_bot"},
		{"pages", 200000002, "herald_pages_bot"},
	}
	if got := s.Bots(); !slices.Equal(got, want) {
		t.Errorf("Bots() = %+v\nwant %+v", got, want)
	}
	if got := derivedUsername(strings.Repeat("x", 40), 7); len(got) != 32 || !strings.HasSuffix(got, "_bot") {
		t.Errorf("long name gives username %q", got)
	}
	if got := derivedUsername("ü-ß", 7); got != "herald_7_bot" {
		t.Errorf("a name without usable characters gives %q, want the id", got)
	}
}

func TestMigrationAppliesToEveryBot(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, twoBots())
	s.SetChat("-55", ChatBehavior{MigrateTo: -10055})
	for _, token := range []string{tokenAlerts, tokenPages} {
		got := sendAs(s, token, text("-55", "x"))
		if d := decode(t, got); got.code != 400 || d.Parameters.MigrateToChatID != -10055 {
			t.Errorf("got %d %s", got.code, got.body)
		}
		got = call(s, token, "getChat", url.Values{"chat_id": {"-55"}})
		if d := decode(t, got); got.code != 400 || d.Parameters.MigrateToChatID != -10055 {
			t.Errorf("getChat: got %d %s", got.code, got.body)
		}
		mustAccept(t, sendAs(s, token, text("-10055", "x")))
	}
	// Both bots' messages share the new chat's numbering.
	if ms := s.Messages(); len(ms) != 2 || ms[0].MessageID != 1 || ms[1].MessageID != 2 || ms[0].Bot == ms[1].Bot {
		t.Errorf("messages %+v", ms)
	}
}

func TestFaultsWithBotSelector(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		inject func(s *Server)
		// want are the codes of a send by alerts, then by pages.
		want [2]int
	}{
		{"FailNext for one bot", func(s *Server) { s.FailNext(1, FaultServerError, "alerts") }, [2]int{500, 200}},
		{"FailNext for any bot", func(s *Server) { s.FailNext(1, FaultServerError) }, [2]int{500, 200}},
		{"FailNext for two bots", func(s *Server) { s.FailNext(1, FaultTooMany, "pages", "alerts") }, [2]int{429, 429}},
		{"outage of one bot", func(s *Server) { s.SetOutage(true, "pages") }, [2]int{200, 502}},
		{"outage of all", func(s *Server) { s.SetOutage(true) }, [2]int{502, 502}},
		{"outage ended for all", func(s *Server) { s.SetOutage(true, "pages"); s.SetOutage(false) }, [2]int{200, 200}},
		{"fault rates of one bot", func(s *Server) { s.SetFaultRates(FaultRates{ServerError: 1, Seed: 1}, "alerts") }, [2]int{500, 200}},
		{"fault rates of all", func(s *Server) { s.SetFaultRates(FaultRates{ServerError: 1, Seed: 1}) }, [2]int{500, 500}},
		{"unknown bot changes nothing", func(s *Server) { s.Force429(time.Hour, "alerts", "nobody") }, [2]int{200, 200}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newFake(t, twoBots())
			tc.inject(s)
			for i, token := range []string{tokenAlerts, tokenPages} {
				got := sendAs(s, token, text(strconv.Itoa(42+i), "x"))
				if got.code/100 != tc.want[i]/100 || (tc.want[i] != 500 && got.code != tc.want[i]) {
					t.Errorf("send %d: got %d %s, want %d", i, got.code, got.body, tc.want[i])
				}
			}
			st := s.Stats()
			if inj := st.Bots["alerts"].Injected + st.Bots["pages"].Injected; inj != st.Injected {
				t.Errorf("injected by bot %d, in total %d", inj, st.Injected)
			}
		})
	}
}

func TestRemoteWithBots(t *testing.T) {
	t.Parallel()
	s := startFake(t, twoBots())
	rm := Remote{URL: s.URL()}
	ctx := context.Background()
	post := func(token, chat string) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/bot"+token+"/sendMessage",
			strings.NewReader(text(chat, "x").Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	if bots, err := rm.Bots(ctx); err != nil || len(bots) != 2 || bots[0].Name != "alerts" || bots[1].ID != 200000002 {
		t.Fatalf("Bots: %+v %v", bots, err)
	}
	if err := rm.Force429(ctx, time.Hour, "alerts"); err != nil {
		t.Fatal(err)
	}
	if a, p := post(tokenAlerts, "1"), post(tokenPages, "1"); a != 429 || p != 200 {
		t.Errorf("after Force429 of alerts: alerts %d, pages %d", a, p)
	}
	if err := rm.Force429(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := rm.SetOutage(ctx, true, "pages"); err != nil {
		t.Fatal(err)
	}
	if a, p := post(tokenAlerts, "2"), post(tokenPages, "2"); a != 200 || p != 502 {
		t.Errorf("outage of pages: alerts %d, pages %d", a, p)
	}
	if err := rm.SetOutage(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := rm.FailNext(ctx, 1, FaultServerError, "200000002"); err != nil {
		t.Fatal(err)
	}
	if err := rm.SetFaultRates(ctx, FaultRates{}, "alerts", "pages"); err != nil {
		t.Fatal(err)
	}
	if a, p := post(tokenAlerts, "3"), post(tokenPages, "3"); a != 200 || p != 500 {
		t.Errorf("FailNext of pages: alerts %d, pages %d", a, p)
	}
	mustAcceptCode(t, post(tokenPages, "4"))

	rep, err := rm.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	al, pg := rep.Bots["alerts"], rep.Bots["pages"]
	if rep.Messages != 4 || al.Accepted != 2 || al.TooManyFlood != 1 || pg.Accepted != 2 || pg.ServerErrors != 2 || pg.Injected != 1 {
		t.Errorf("stats report %+v", rep)
	}
	msgs, err := rm.MessagesOf(ctx, "pages", 1)
	if err != nil || len(msgs) != 1 || msgs[0].ChatID != 4 || msgs[0].Bot != "pages" || msgs[0].BotID != 200000002 {
		t.Errorf("MessagesOf(pages, 1): %+v %v", msgs, err)
	}

	for name, act := range map[string]func() error{
		"Force429":      func() error { return rm.Force429(ctx, time.Hour, "nobody") },
		"SetOutage":     func() error { return rm.SetOutage(ctx, true, "alerts", "nobody") },
		"FailNext":      func() error { return rm.FailNext(ctx, 1, FaultHang, "") },
		"SetFaultRates": func() error { return rm.SetFaultRates(ctx, FaultRates{Hang: 1}, "nobody") },
		"MessagesOf":    func() error { _, err := rm.MessagesOf(ctx, "nobody", 0); return err },
	} {
		if err := act(); err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "alerts (id 200000001)") {
			t.Errorf("%s with an unknown bot: %v; want a 400 naming the known bots", name, err)
		}
	}
	// Nothing was applied by the refused calls.
	if a := post(tokenAlerts, "5"); a != 200 {
		t.Errorf("alerts after refused control calls: %d", a)
	}
}

func mustAcceptCode(t *testing.T, code int) {
	t.Helper()
	if code != http.StatusOK {
		t.Fatalf("want 200, got %d", code)
	}
}

func TestTokensConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		startOK bool
		bots    []string // the bots New serves
	}{
		{"zero config", Config{}, true, []string{DefaultBot}},
		{"Token only", Config{Token: testToken}, true, []string{DefaultBot}},
		{"Tokens only", twoBots(), true, []string{"alerts", "pages"}},
		{"Token and Tokens", Config{Token: testToken, Tokens: map[string]string{"pages": tokenPages}}, true, []string{"default", "pages"}},
		{"default named twice alike", Config{Token: testToken, Tokens: map[string]string{DefaultBot: testToken}}, true, []string{DefaultBot}},
		{"default named twice apart", Config{Token: testToken, Tokens: map[string]string{DefaultBot: tokenPages}}, false, []string{DefaultBot}},
		{"empty token", Config{Tokens: map[string]string{"a": tokenAlerts, "b": ""}}, false, []string{"a"}},
		{"empty name", Config{Tokens: map[string]string{"": tokenAlerts}}, false, []string{"200000001"}},
		{"shared token", Config{Tokens: map[string]string{"a": tokenAlerts, "b": tokenAlerts}}, false, []string{"a"}},
		{"shared id", Config{Tokens: map[string]string{"a": "7:x", "b": "7:y"}}, false, []string{"a", "b"}},
		{"slash in token", Config{Tokens: map[string]string{"a": "7:x/y"}}, false, []string{"a"}},
		{"slash in Token", Config{Token: "7:x/y"}, false, []string{DefaultBot}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var names []string
			for _, b := range New(tc.cfg).Bots() {
				names = append(names, b.Name)
			}
			if !slices.Equal(names, tc.bots) {
				t.Errorf("New serves %q, want %q", names, tc.bots)
			}
			s, err := Start(tc.cfg)
			if err == nil {
				_ = s.Close()
			}
			if (err == nil) != tc.startOK {
				t.Errorf("Start: %v, want ok %v", err, tc.startOK)
			}
			for _, token := range append(mapValues(tc.cfg.Tokens), tc.cfg.Token) {
				if _, secret, _ := strings.Cut(token, ":"); err != nil && secret != "" && strings.Contains(err.Error(), secret) {
					t.Errorf("Start's error shows a token: %v", err)
				}
			}
		})
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
