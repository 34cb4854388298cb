package inbound

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/jobs"
)

// accepted is one post each format takes, with the answer its service
// gives and the alert it must make.
var acceptedCases = []struct {
	name       string
	post       post
	status     int
	answer     string // the whole body, or with a leading "~" a substring
	title      string
	severity   alerts.Severity
	status2    alerts.Status
	bodyHas    []string
	labels     map[string]string
	keyed      bool
	ack        bool
	noDispatch bool
}{
	{name: "slack text", post: post{path: "/v1/inbound/slack/" + sendSecret, body: `{"text":"*Disk full* on _db-1_ ~maybe~ see <https://grafana.example/d/1|the dashboard> <!here> ` + "`df -h`" + `"}`},
		status: 200, answer: "ok", title: "Disk full on db-1 maybe see the dashboard (https://grafana.example/d/1) @here df -h", severity: alerts.SeverityWarning},
	{name: "slack blocks", post: post{path: "/v1/inbound/slack/" + sendSecret, body: `{"blocks":[{"type":"header","text":{"type":"plain_text","text":"Checkout down"}},{"type":"section","text":{"type":"mrkdwn","text":"*Status:* 503"},"fields":[{"type":"mrkdwn","text":"*Region:*\neu-1"}]},{"type":"divider"},{"type":"context","elements":[{"type":"mrkdwn","text":"by <@U123>"}]}]}`},
		status: 200, answer: "ok", title: "Checkout down", bodyHas: []string{"Status: 503", "Region:\neu-1", "by @U123"}},
	{name: "slack attachments", post: post{path: "/v1/inbound/slack/" + sendSecret, body: `{"channel":"#ops","attachments":[{"color":"danger","title":"[FIRING:1] HighLatency","title_link":"http://am.example/#/alerts","text":"latency &gt; 2s","fields":[{"title":"severity","value":"page","short":true}],"footer":"Alertmanager"}]}`},
		status: 200, answer: "ok", title: "[FIRING:1] HighLatency", severity: alerts.SeverityCritical, bodyHas: []string{"latency > 2s", "severity: page", "Alertmanager"}, labels: map[string]string{"channel": "#ops", "token": "tools"}},
	{name: "slack form payload", post: post{path: "/v1/inbound/slack/" + sendSecret, body: "payload=" + `%7B%22text%22%3A%22hello%22%7D`, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		status: 200, answer: "ok", title: "hello"},
	{name: "discord content and embed", post: post{path: "/v1/inbound/discord/api/webhooks/123/" + sendSecret, body: `{"username":"Gatus","content":"**Heads up** <@&42>","embeds":[{"title":"api is __down__","url":"https://status.example","description":"[details](https://status.example/api) ~~old~~ ||secret||","color":15158332,"fields":[{"name":"Condition","value":"` + "`[STATUS] == 200`" + `"}],"footer":{"text":"Gatus"},"timestamp":"2026-12-04T11:59:00Z","image":{"url":"https://img.example/g.png"}}]}`},
		status: 204, answer: "", title: "api is down", severity: alerts.SeverityCritical, bodyHas: []string{"Heads up @42", "details (https://status.example/api) old secret", "Condition: [STATUS] == 200", "Gatus"}, labels: map[string]string{"username": "Gatus", "webhook": "123", "token": "tools"}},
	{name: "discord wait", post: post{path: "/v1/inbound/discord/api/v10/webhooks/123/" + sendSecret + "?wait=true", body: `{"content":"plain"}`},
		status: 200, answer: `~"content":"plain"`, title: "plain"},
	{name: "teams messagecard (Uptime Kuma)", post: post{path: "/v1/inbound/teams/" + sendSecret, body: "uptimekuma_teams_down.json"},
		status: 200, answer: "1", title: "🔴 Application [shop] went down", severity: alerts.SeverityCritical, bodyHas: []string{"Uptime Kuma", "Description", "Monitor: shop", "URL: https://shop.example.com"}},
	{name: "teams workflows (Gatus)", post: post{path: "/v1/inbound/teams/" + sendSecret, body: "gatus_teamsworkflows_triggered.json"},
		status: 202, answer: "", title: "⛑ Gatus", severity: alerts.SeverityCritical, bodyHas: []string{"An alert for endpoint-name has been triggered", "❌: [CONNECTED] == true"}},
	{name: "pagerduty trigger", post: post{path: "/v1/inbound/pagerduty/v2/enqueue", body: `{"routing_key":"` + sendSecret + `","event_action":"trigger","dedup_key":"db-1/disk","payload":{"summary":"Disk full","source":"db-1","severity":"error","component":"postgres","custom_details":{"free":"1%"}},"links":[{"href":"https://runbook.example/disk","text":"Runbook"}],"images":[{"src":"https://img.example/disk.png"}]}`},
		status: 202, answer: `{"status":"success","message":"Event processed","dedup_key":"db-1/disk"}`, title: "Disk full", severity: alerts.SeverityCritical, bodyHas: []string{"free: 1%", "Runbook: https://runbook.example/disk"}, labels: map[string]string{"source": "db-1", "component": "postgres", "token": "tools"}, keyed: true},
	{name: "pagerduty resolve", post: post{path: "/v1/inbound/pagerduty/v2/enqueue", body: `{"routing_key":"` + sendSecret + `","event_action":"resolve","dedup_key":"db-1/disk"}`},
		status: 202, answer: `~"dedup_key":"db-1/disk"`, title: "Resolved: db-1/disk", status2: alerts.StatusResolved, keyed: true},
	{name: "pagerduty acknowledge", post: post{path: "/v1/inbound/pagerduty/v2/enqueue", body: `{"routing_key":"` + sendSecret + `","event_action":"acknowledge","dedup_key":"db-1/disk"}`},
		status: 202, answer: `~"status":"success"`, ack: true, noDispatch: true},
	{name: "opsgenie create (Uptime Kuma)", post: post{path: "/v1/inbound/opsgenie/v2/alerts", body: "uptimekuma_opsgenie_down.json", header: map[string]string{"Authorization": "GenieKey " + sendSecret}},
		status: 202, answer: `~"result":"Request will be processed"`, title: "Uptime Kuma Alert: shop", severity: alerts.SeverityWarning, bodyHas: []string{"Request failed with status code 503"}, labels: map[string]string{"source": "Uptime Kuma", "priority": "P3", "token": "tools"}, keyed: true},
	{name: "opsgenie close (Uptime Kuma)", post: post{path: "/v1/inbound/opsgenie/v2/alerts/shop/close?identifierType=alias", body: "uptimekuma_opsgenie_up_close.json", header: map[string]string{"Authorization": "GenieKey " + sendSecret}},
		status: 202, answer: `~"requestId":"`, title: "Closed: shop", status2: alerts.StatusResolved, keyed: true},
	{name: "opsgenie acknowledge", post: post{path: "/v1/inbound/opsgenie/v2/alerts/shop/acknowledge?identifierType=alias", body: `{}`, header: map[string]string{"Authorization": "GenieKey " + sendSecret}},
		status: 202, answer: `~"took":0`, ack: true, noDispatch: true},
	{name: "opsgenie update message (Alertmanager update_alerts)", post: post{method: http.MethodPut, path: "/v1/inbound/opsgenie/v2/alerts/g1/message?identifierType=alias", body: `{"message":"new"}`, header: map[string]string{"Authorization": "GenieKey " + sendSecret}},
		status: 202, answer: `~"result":"Request will be processed"`, noDispatch: true},
	{name: "ntfy JSON publish (Uptime Kuma)", post: post{path: "/v1/inbound/ntfy", body: "uptimekuma_ntfy_down.json", header: map[string]string{"Authorization": "Bearer " + sendSecret}},
		status: 200, answer: `~"event":"message"`, title: "shop Down [Uptime-Kuma]", severity: alerts.SeverityCritical, bodyHas: []string{"Request failed with status code 503", "Open shop: https://shop.example.com"}, labels: map[string]string{"topic": "alerts", "tags": "red_circle,prod", "token": "tools"}},
	{name: "ntfy PUT with headers", post: post{method: http.MethodPut, path: "/v1/inbound/ntfy/backups", body: "**Backup** failed on `nas`", header: map[string]string{"Authorization": "Bearer " + sendSecret, "Title": "Backup failed", "Priority": "high", "Tags": "warning,skull", "Click": "https://nas.example/backup", "Markdown": "yes"}},
		status: 200, answer: `~"topic":"backups"`, title: "Backup failed", severity: alerts.SeverityWarning, bodyHas: []string{"Backup failed on nas"}, labels: map[string]string{"topic": "backups", "tags": "warning,skull", "token": "tools"}},
	{name: "ntfy ?auth=", post: post{path: "/v1/inbound/ntfy/backups?auth=" + base64.RawURLEncoding.EncodeToString([]byte("Bearer "+sendSecret)), body: "done"},
		status: 200, answer: `~"message":"done"`, title: "done", severity: alerts.SeverityInfo},
	{name: "gotify (Uptime Kuma)", post: post{path: "/v1/inbound/gotify/message?token=" + sendSecret, body: "uptimekuma_gotify.json"},
		status: 200, answer: `~"priority":8`, title: "Uptime-Kuma", severity: alerts.SeverityCritical, bodyHas: []string{"[shop] [🔴 Down] Request failed"}},
	{name: "gotify markdown extras", post: post{path: "/v1/inbound/gotify/message", body: `{"title":"Deploy","message":"**v1.2** is [live](https://app.example)","priority":5,"extras":{"client::display":{"contentType":"text/markdown"},"client::notification":{"click":{"url":"https://app.example"}}}}`, header: map[string]string{"X-Gotify-Key": sendSecret}},
		status: 200, answer: `~"title":"Deploy"`, title: "Deploy", severity: alerts.SeverityWarning, bodyHas: []string{"v1.2 is live (https://app.example)"}},
}

// TestAccepted posts each format's payloads: the service's answer, and
// the alert made of it.
func TestAccepted(t *testing.T) {
	t.Parallel()
	for _, tc := range acceptedCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			p := tc.post
			if strings.HasSuffix(p.body, ".json") {
				p.body = fixture(t, p.body)
			}
			w := p.do(testHandler(t, rec))
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			got := strings.TrimSpace(w.Body.String())
			if sub, ok := strings.CutPrefix(tc.answer, "~"); ok {
				if !strings.Contains(got, sub) {
					t.Fatalf("answer %s lacks %s", got, sub)
				}
			} else if got != tc.answer {
				t.Fatalf("answer %q, want %q", got, tc.answer)
			}
			checkOutcome(t, rec, tc.noDispatch, tc.ack)
			if tc.noDispatch {
				return
			}
			a := rec.alerts()[0]
			if a.Title != tc.title {
				t.Errorf("title %q, want %q", a.Title, tc.title)
			}
			if tc.severity != "" && a.Severity != tc.severity {
				t.Errorf("severity %q, want %q", a.Severity, tc.severity)
			}
			if tc.status2 != "" && a.Status != tc.status2 {
				t.Errorf("status %q, want %q", a.Status, tc.status2)
			}
			for _, s := range tc.bodyHas {
				if !strings.Contains(a.Body, s) {
					t.Errorf("body lacks %q:\n%s", s, a.Body)
				}
			}
			for k, v := range tc.labels {
				if a.Labels[k] != v {
					t.Errorf("label %s=%q, want %q (labels %v)", k, a.Labels[k], v, a.Labels)
				}
			}
			if tc.keyed != (a.Key != "") {
				t.Errorf("key %q, keyed %v", a.Key, tc.keyed)
			}
			assertPlain(t, a.Title+"\n"+a.Body)
		})
	}
}

func checkOutcome(t *testing.T, rec *recorder, noDispatch, ack bool) {
	t.Helper()
	n := len(rec.alerts())
	if noDispatch && n != 0 || !noDispatch && n != 1 {
		t.Fatalf("%d alerts dispatched", n)
	}
	if ack != (len(rec.acks) == 1) {
		t.Fatalf("acknowledgements %v", rec.acks)
	}
}

// assertPlain fails when formatting marks survived the conversion.
func assertPlain(t *testing.T, s string) {
	t.Helper()
	for _, mark := range []string{"**", "__", "~~", "||", "`", "<!", "<@", "<http", "](", "&gt;", "&amp;", "&#x"} {
		if strings.Contains(s, mark) {
			t.Errorf("raw mark %q left in %q", mark, s)
		}
	}
}

// TestResolutionsShareTheFiringKey checks that PagerDuty's and
// Opsgenie's resolutions carry their firing alert's key, so they thread.
func TestResolutionsShareTheFiringKey(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := testHandler(t, rec)
	auth := map[string]string{"Authorization": "GenieKey " + sendSecret}
	for _, p := range []post{
		{path: "/v1/inbound/pagerduty/v2/enqueue", body: `{"routing_key":"` + sendSecret + `","event_action":"trigger","dedup_key":"k1","payload":{"summary":"s","source":"h","severity":"info"}}`},
		{path: "/v1/inbound/pagerduty/v2/enqueue", body: `{"routing_key":"` + sendSecret + `","event_action":"resolve","dedup_key":"k1"}`},
		{path: "/v1/inbound/opsgenie/v2/alerts", body: `{"message":"m","alias":"a 1"}`, header: auth},
		{path: "/v1/inbound/opsgenie/v2/alerts/a%201/close?identifierType=alias", body: ``, header: auth},
	} {
		if w := p.do(h); w.Code != http.StatusAccepted {
			t.Fatalf("%s: %d %s", p.path, w.Code, w.Body)
		}
	}
	as := rec.alerts()
	if len(as) != 4 || as[0].Key != as[1].Key || as[2].Key != as[3].Key || as[0].Key == as[2].Key {
		t.Fatalf("keys: %q %q %q %q", as[0].Key, as[1].Key, as[2].Key, as[3].Key)
	}
	if as[0].Fingerprint == as[1].Fingerprint || as[2].Fingerprint == as[3].Fingerprint {
		t.Fatal("a resolution has its firing event's fingerprint: the idempotency window would drop it")
	}
}

// refusedCases are what each service refuses, with its answer.
var refusedCases = []struct {
	name   string
	post   post
	status int
	answer string // substring
}{
	{"slack bad JSON", post{path: "/v1/inbound/slack/" + sendSecret, body: `{"text":`}, 400, "invalid_payload"},
	{"slack no text", post{path: "/v1/inbound/slack/" + sendSecret, body: `{"channel":"#x"}`}, 400, "no_text"},
	{"slack unknown token", post{path: "/v1/inbound/slack/wrong", body: `{"text":"x"}`}, 403, "invalid_token"},
	{"slack token without send", post{path: "/v1/inbound/slack/" + operateSecret, body: `{"text":"x"}`}, 403, "action_prohibited"},
	{"discord empty", post{path: "/v1/inbound/discord/api/webhooks/1/" + sendSecret, body: `{"content":""}`}, 400, `"code":50006`},
	{"discord bad JSON", post{path: "/v1/inbound/discord/api/webhooks/1/" + sendSecret, body: `{`}, 400, `"code":50109`},
	{"discord bad token", post{path: "/v1/inbound/discord/api/webhooks/1/nope", body: `{"content":"x"}`}, 401, `"code":50027`},
	{"teams empty card", post{path: "/v1/inbound/teams/" + sendSecret, body: `{"@type":"MessageCard"}`}, 400, "Summary or Text is required."},
	{"teams bad token", post{path: "/v1/inbound/teams/nope", body: `{"type":"message"}`}, 401, "DirectApiAuthorizationRequired"},
	{"pagerduty no summary", post{path: "/v1/inbound/pagerduty/v2/enqueue", body: `{"routing_key":"` + sendSecret + `","event_action":"trigger","payload":{"source":"h","severity":"bad"}}`}, 400, `"errors":["'payload.summary' is missing or blank","'payload.severity' is invalid`},
	{"pagerduty resolve without key", post{path: "/v1/inbound/pagerduty/v2/enqueue", body: `{"routing_key":"` + sendSecret + `","event_action":"resolve"}`}, 400, `'dedup_key' is missing or blank`},
	{"pagerduty bad action", post{path: "/v1/inbound/pagerduty/v2/enqueue", body: `{"routing_key":"` + sendSecret + `","event_action":"fire"}`}, 400, `"status":"invalid event"`},
	{"pagerduty unknown key", post{path: "/v1/inbound/pagerduty/v2/enqueue", body: `{"routing_key":"nope","event_action":"trigger"}`}, 400, `"errors":["Invalid routing key"]`},
	{"opsgenie no message", post{path: "/v1/inbound/opsgenie/v2/alerts", body: `{"alias":"a"}`, header: map[string]string{"Authorization": "GenieKey " + sendSecret}}, 422, `"errors":{"message":"Message can not be empty."}`},
	{"opsgenie bad priority", post{path: "/v1/inbound/opsgenie/v2/alerts", body: `{"message":"m","priority":"P9"}`, header: map[string]string{"Authorization": "GenieKey " + sendSecret}}, 422, `"priority":"Priority should be one of`},
	{"opsgenie no key", post{path: "/v1/inbound/opsgenie/v2/alerts", body: `{"message":"m"}`, header: map[string]string{"Authorization": "Bearer " + sendSecret}}, 401, `"message":"Could not authenticate"`},
	{"opsgenie bad identifierType", post{path: "/v1/inbound/opsgenie/v2/alerts/a/close?identifierType=name", body: `{}`, header: map[string]string{"Authorization": "GenieKey " + sendSecret}}, 422, `Invalid identifier type [name]`},
	{"ntfy bad priority", post{path: "/v1/inbound/ntfy/t", body: "x", header: map[string]string{"Authorization": "Bearer " + sendSecret, "Priority": "9"}}, 400, `"code":40001`},
	{"ntfy bad topic", post{path: "/v1/inbound/ntfy", body: `{"topic":"a b","message":"x"}`, header: map[string]string{"Authorization": "Bearer " + sendSecret}}, 400, `"error":"invalid request: topic`},
	{"ntfy unauthorized", post{path: "/v1/inbound/ntfy/t", body: "x"}, 401, `{"code":40101,"http":401,"error":"unauthorized"`},
	{"gotify no message", post{path: "/v1/inbound/gotify/message?token=" + sendSecret, body: `{"title":"t"}`}, 400, `"errorDescription":"Field 'message' is required"`},
	{"gotify bad token", post{path: "/v1/inbound/gotify/message?token=nope", body: `{"message":"m"}`}, 401, `"error":"Unauthorized","errorCode":401`},
}

// TestRefused checks each service's refusals, with nothing dispatched.
func TestRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range refusedCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			w := tc.post.do(testHandler(t, rec))
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.answer) {
				t.Fatalf("got %d %s, want %d with %s", w.Code, w.Body, tc.status, tc.answer)
			}
			if n := len(rec.alerts()); n != 0 {
				t.Fatalf("%d alerts dispatched", n)
			}
			if strings.Contains(w.Body.String(), sendSecret) || strings.Contains(w.Body.String(), operateSecret) {
				t.Fatal("the answer holds a secret")
			}
		})
	}
}

// TestUnavailable checks that a dispatcher that cannot store gives each
// service's retryable answer, 503 with Retry-After.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	for _, tc := range acceptedCases {
		if tc.noDispatch {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{err: fmt.Errorf("enqueue: %w", jobs.ErrUnavailable)}
			p := tc.post
			if strings.HasSuffix(p.body, ".json") {
				p.body = fixture(t, p.body)
			}
			w := p.do(testHandler(t, rec))
			if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
				t.Fatalf("got %d (Retry-After %q) %s", w.Code, w.Header().Get("Retry-After"), w.Body)
			}
		})
	}
}

// TestDiscordWaitAnswerIsAMessage checks the fields a client library reads
// from ?wait=true's answer.
func TestDiscordWaitAnswerIsAMessage(t *testing.T) {
	t.Parallel()
	w := post{path: "/v1/inbound/discord/api/v10/webhooks/77/" + sendSecret + "?wait=true", body: `{"content":"c","embeds":[{"title":"t"}]}`}.do(testHandler(t, &recorder{}))
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "channel_id", "author", "content", "embeds", "timestamp", "webhook_id"} {
		if _, ok := m[k]; !ok {
			t.Errorf("answer lacks %s: %s", k, w.Body)
		}
	}
	if m["webhook_id"] != "77" || m["content"] != "c" {
		t.Fatalf("answer %s", w.Body)
	}
}

// TestOpsgenieSeverityWithoutPriority checks that a create without a
// priority takes a severity word among its details (Alertmanager's
// labels), and P3's warning without one.
func TestOpsgenieSeverityWithoutPriority(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := testHandler(t, rec)
	auth := map[string]string{"Authorization": "GenieKey " + sendSecret}
	for _, body := range []string{`{"message":"a","details":{"severity":"critical"}}`, `{"message":"b"}`, `{"message":"c","priority":"P5","details":{"severity":"critical"}}`} {
		if w := (post{path: "/v1/inbound/opsgenie/v2/alerts", body: body, header: auth}).do(h); w.Code != http.StatusAccepted {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	as := rec.alerts()
	if as[0].Severity != alerts.SeverityCritical || as[1].Severity != alerts.SeverityWarning || as[2].Severity != alerts.SeverityInfo {
		t.Fatalf("severities %s %s %s, want critical warning info", as[0].Severity, as[1].Severity, as[2].Severity)
	}
}

// TestSlackAttachmentTitleOnce checks that the first attachment's title,
// the alert's title, is not repeated in the body when the sender pads it
// (Alertmanager's default title ends in a space).
func TestSlackAttachmentTitleOnce(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	w := post{path: "/v1/inbound/slack/" + sendSecret, body: `{"attachments":[{"title":"[FIRING:1] DiskFull db-1 ","text":"details"}]}`}.do(testHandler(t, rec))
	if w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	a := rec.alerts()[0]
	if a.Title != "[FIRING:1] DiskFull db-1" || strings.Contains(a.Body, "FIRING") || a.Body != "details" {
		t.Fatalf("title %q body %q", a.Title, a.Body)
	}
}
