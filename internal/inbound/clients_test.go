package inbound_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clientsDir is test/clients: the npm packages of Slack's and Discord's
// clients, installed there by `npm ci` (.ci/run does).
func clientsDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "clients"))
	if err != nil {
		t.Fatal(err)
	}
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "discord.js"))
	if nodeErr != nil || modErr != nil {
		if os.Getenv("HERALD_REQUIRE_NPM_CLIENTS") != "" {
			t.Fatalf("node or test/clients/node_modules missing and HERALD_REQUIRE_NPM_CLIENTS is set: run `npm ci` in %s", dir)
		}
		t.Skip("node or test/clients/node_modules missing (run `npm ci` in test/clients); set HERALD_REQUIRE_NPM_CLIENTS=1 to fail instead")
	}
	return dir
}

// runNode runs a script of test/clients with env and returns its output;
// a non-zero exit (the client reported failure) fails the test.
func runNode(t *testing.T, dir, script string, env ...string) string {
	t.Helper()
	cmd := exec.Command("node", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	timer := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: the client failed: %v\n%s", script, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestNpmClients sends through @slack/webhook's IncomingWebhook and
// discord.js's WebhookClient unchanged but for the URL: each reports
// success (Slack's "ok", Discord's message object) and its message arrives
// once, readable.
func TestNpmClients(t *testing.T) {
	dir := clientsDir(t)
	s := startStack(t)

	out := runNode(t, dir, "send-slack.js", "HERALD_SLACK_URL="+s.Fleet.APIBase+"/v1/inbound/slack/"+s.Fleet.APIToken)
	var slack struct{ Text string }
	if err := json.Unmarshal([]byte(out), &slack); err != nil || slack.Text != "ok" {
		t.Fatalf("@slack/webhook result %q, want {\"text\":\"ok\"}", out)
	}
	out = runNode(t, dir, "send-discord.js", "HERALD_DISCORD_API="+s.Fleet.APIBase+"/v1/inbound/discord/api",
		"HERALD_DISCORD_ID=1234567890", "HERALD_DISCORD_TOKEN="+s.Fleet.APIToken)
	var discord struct {
		ID        string `json:"id"`
		WebhookID string `json:"webhook_id"`
	}
	if err := json.Unmarshal([]byte(out), &discord); err != nil || discord.ID == "" || discord.WebhookID != "1234567890" {
		t.Fatalf("discord.js returned %q, want the message object", out)
	}

	waitPerChat(t, s.Ctx, s.Fake, []string{"slack", "discord"}, 1)
	time.Sleep(500 * time.Millisecond) // a second message would show by now
	want := map[string][]string{
		"slack": {"Deploy failed: api v2.3.1", "Deploy failed on prod", "run 42", "@here",
			"Stage: migrate retry", "Env:\nprod", "By:\n@U024BE7LH", "from CI", "Log tail"},
		"discord": {"Backup failed on nas-1", "heads up @987654321098765432", "rsync exited with 23", "the log details",
			"Job: nightly weekly", "Owner: @123456789012345678", "backup-bot"},
	}
	// The emphasis arrives as Telegram HTML, as the fake's parser read it.
	html := map[string][]string{
		"slack": {"<b>Deploy failed</b> on <i>prod</i>", `<a href="https://ci.example/run/42">run 42</a>`,
			"<b>Stage:</b> <code>migrate</code> <s>retry</s>", "<b>Env:</b>", `<a href="https://ci.example">CI</a>`},
		"discord": {"<b>rsync</b> exited with <code>23</code>", `<a href="https://nas.example/log">the log</a>`,
			"<tg-spoiler>details</tg-spoiler>", "<s>nightly</s> weekly"},
	}
	for r, parts := range want {
		ms := inChat(s.Fake, chats[r])
		if len(ms) != 1 {
			t.Fatalf("%s: %d messages, want 1", r, len(ms))
		}
		text := visible(t, ms[0])
		t.Logf("%s:\n%s", r, text)
		assertReadable(t, text)
		for _, p := range parts {
			if !strings.Contains(text, p) {
				t.Errorf("%s: the message lacks %q", r, p)
			}
		}
		if ms[0].ParseMode != "HTML" {
			t.Fatalf("%s: parse_mode %q, want HTML", r, ms[0].ParseMode)
		}
		for _, h := range html[r] {
			if !strings.Contains(ms[0].Text+ms[0].Caption, h) {
				t.Errorf("%s: the message's HTML lacks %s:\n%s", r, h, ms[0].Text+ms[0].Caption)
			}
		}
	}
}
