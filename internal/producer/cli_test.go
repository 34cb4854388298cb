package producer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/producer"
)

// sendResult is what one run of producer.Send printed and returned.
type sendResult struct {
	code           int
	stdout, stderr string
}

// runSend runs `producer send` with args and stdin against b's Enqueuer.
func runSend(b *testBundle, stdin io.Reader, args ...string) sendResult {
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errOut bytes.Buffer
	code := producer.Send(context.Background(), b.enq, args, stdin, &out, &errOut)
	return sendResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

// sentResult checks a successful run and returns the printed result.
func sentResult(t *testing.T, r sendResult) jobs.Result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr %q", r.code, r.stderr)
	}
	var res jobs.Result
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil || res.TaskID == "" {
		t.Fatalf("stdout %q is not a result: %v", r.stdout, err)
	}
	return res
}

func TestSend(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) *testBundle {
		t.Helper()
		return newBundle(t)
	}

	t.Run("text from arguments", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		res := sentResult(t, runSend(b, strings.NewReader("ignored"), "--chat", "42", "disk", "full"))
		if res.Queue != jobs.QueueDefault || res.Duplicate {
			t.Fatalf("result %+v", res)
		}
		m, info := b.task(t, res.Queue, res.TaskID)
		if m.Text != "disk full" || m.Chat != "42" || m.ParseMode != "" || m.CreatedAt.IsZero() {
			t.Fatalf("stored %+v", m)
		}
		if m.MaxRetry == nil || *m.MaxRetry != testMaxRetry || info.Timeout != testTimeout {
			t.Fatalf("max_retry %v timeout %v", m.MaxRetry, info.Timeout)
		}
	})

	for _, args := range [][]string{{"--chat", "42"}, {"--chat", "42", "-"}} {
		t.Run("text from stdin with args "+strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			res := sentResult(t, runSend(b, strings.NewReader("line one\nline two\n\n"), args...))
			if m, _ := b.task(t, res.Queue, res.TaskID); m.Text != "line one\nline two" {
				t.Fatalf("stored text %q, want the stdin lines without trailing newlines", m.Text)
			}
		})
	}

	t.Run("every option", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		res := sentResult(t, runSend(b, nil, "--chat", "@alerts", "--parse-mode", "html", "--queue", "low",
			"--silent", "--thread", "9", "--no-preview", "--protect", "<b>hi</b>"))
		if res.Queue != jobs.QueueLow {
			t.Fatalf("queue %q, want low", res.Queue)
		}
		m, _ := b.task(t, jobs.QueueLow, res.TaskID)
		m.MaxRetry = nil
		want := jobs.SendMessage{V: 1, Chat: "@alerts", Text: "<b>hi</b>", ParseMode: "HTML",
			DisableNotification: true, MessageThreadID: 9, DisableLinkPreview: true, ProtectContent: true, CreatedAt: m.CreatedAt}
		if m != want {
			t.Fatalf("stored\n%+v\nwant\n%+v", m, want)
		}
	})

	t.Run("idempotency key twice stores once", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := sentResult(t, runSend(b, nil, "--chat", "42", "--idempotency-key", "deploy-99", "deployed"))
		second := sentResult(t, runSend(b, nil, "--chat", "42", "--idempotency-key", "deploy-99", "deployed"))
		if first.Duplicate || !second.Duplicate || first.TaskID != second.TaskID || first.TaskID != jobs.IdempotencyID("", "deploy-99") {
			t.Fatalf("first %+v, second %+v", first, second)
		}
		if n := len(b.taskKeys()); n != 1 {
			t.Fatalf("%d tasks stored, want 1", n)
		}
	})

	usage := []struct {
		name     string
		args     []string
		stdin    string
		wantLine string // a line of stderr must start with this
	}{
		{name: "missing chat", args: []string{"hello"}, wantLine: "producer send: --chat: "},
		{name: "bad chat", args: []string{"--chat", "abc", "hello"}, wantLine: "producer send: --chat: "},
		{name: "legacy markdown", args: []string{"--chat", "42", "--parse-mode", "Markdown", "hi"}, wantLine: "producer send: --parse-mode: "},
		{name: "unknown queue", args: []string{"--chat", "42", "--queue", "urgent", "hi"}, wantLine: "producer send: --queue: "},
		{name: "negative thread", args: []string{"--chat", "42", "--thread", "-1", "hi"}, wantLine: "producer send: --thread: "},
		{name: "empty stdin", args: []string{"--chat", "42"}, stdin: "\n", wantLine: "producer send: --text (argument or stdin): "},
		{name: "unknown flag", args: []string{"--chatt", "42", "hi"}, wantLine: "producer send: flag provided but not defined: -chatt"},
		{name: "unknown flag after the text", args: []string{"--chat", "42", "hi", "--redis-url", "redis://x"}, wantLine: "producer send: flag provided but not defined: -redis-url (see producer send -h; settings such as -redis-url go before"},
		{name: "thread not a number", args: []string{"--chat", "42", "--thread", "x", "hi"}, wantLine: `producer send: invalid value "x" for flag -thread`},
		{name: "HTML that will not parse", args: []string{"--chat", "42", "--parse-mode", "HTML", "<b>disk full"}, wantLine: `producer send: --text (argument or stdin): is not valid HTML, Telegram would refuse it: Can't find end tag`},
		{name: "MarkdownV2 that will not parse", args: []string{"--chat", "42", "--parse-mode", "MarkdownV2", "v1.2"}, wantLine: `producer send: --text (argument or stdin): is not valid MarkdownV2`},
	}
	for _, tt := range usage {
		t.Run("usage error: "+tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			r := runSend(b, strings.NewReader(tt.stdin), tt.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", r.code, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q on a usage error", r.stdout)
			}
			found := false
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			for _, line := range lines {
				found = found || strings.HasPrefix(line, tt.wantLine)
			}
			if len(lines) != 1 {
				t.Errorf("stderr holds %d lines, want one line per problem:\n%s", len(lines), r.stderr)
			}
			if !found {
				t.Errorf("no stderr line starts with %q:\n%s", tt.wantLine, r.stderr)
			}
			b.requireNoTasks(t)
		})
	}

	t.Run("missing chat and blank text reported together", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		r := runSend(b, strings.NewReader(" "))
		if r.code != 2 || !strings.Contains(r.stderr, "--chat: ") || !strings.Contains(r.stderr, "--text (argument or stdin): ") {
			t.Fatalf("exit %d stderr %q, want both problems", r.code, r.stderr)
		}
	})

	t.Run("help", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		r := runSend(b, nil, "--help")
		if r.code != 0 || !strings.Contains(r.stderr, "usage: producer send --chat") || !strings.Contains(r.stderr, "-idempotency-key") {
			t.Fatalf("exit %d stderr %q", r.code, r.stderr)
		}
		b.requireNoTasks(t)
	})

	t.Run("redis down", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		addr := b.mr.Addr()
		b.mr.Close()
		r := runSend(b, nil, "--chat", "42", "hello")
		if r.code != producer.ExitNotStored {
			t.Fatalf("exit %d, want %d; stderr %q", r.code, producer.ExitNotStored, r.stderr)
		}
		want := "producer send: not stored: cannot reach Redis at " + addr + " (connection refused); is it running, and is REDIS_URL right?\n"
		if r.stderr != want || r.stdout != "" {
			t.Fatalf("stdout %q\nstderr %q\nwant   %q", r.stdout, r.stderr, want)
		}
	})

	// Flags are accepted anywhere: before, between and after the words of
	// the text (issue 14: `producer send "x" --chat 42` failed).
	for _, args := range [][]string{
		{"--chat", "42", "disk", "full"},
		{"disk", "full", "--chat", "42"},
		{"disk", "--chat", "42", "full"},
		{"disk", "full", "--chat=42"},
	} {
		t.Run("flags anywhere: "+strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			res := sentResult(t, runSend(b, nil, args...))
			if m, _ := b.task(t, res.Queue, res.TaskID); m.Text != "disk full" || m.Chat != "42" {
				t.Fatalf("stored chat %q text %q", m.Chat, m.Text)
			}
		})
	}

	t.Run("text after -- may start with a dash", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		res := sentResult(t, runSend(b, nil, "--chat", "42", "--", "-5", "degrees", "--silent"))
		m, _ := b.task(t, res.Queue, res.TaskID)
		if m.Text != "-5 degrees --silent" || m.DisableNotification {
			t.Fatalf("stored text %q silent %v", m.Text, m.DisableNotification)
		}
	})

	t.Run("valid markup is stored as sent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		res := sentResult(t, runSend(b, nil, "--parse-mode", "MarkdownV2", "*disk* full on db\\-1", "--chat", "42"))
		if m, _ := b.task(t, res.Queue, res.TaskID); m.Text != "*disk* full on db\\-1" || m.ParseMode != "MarkdownV2" {
			t.Fatalf("stored %q %q", m.Text, m.ParseMode)
		}
	})

	t.Run("stdin read error", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		r := runSend(b, iotest.ErrReader(errors.New("broken pipe")), "--chat", "42")
		if r.code != 1 || !strings.Contains(r.stderr, "read stdin: broken pipe") {
			t.Fatalf("exit %d stderr %q", r.code, r.stderr)
		}
		b.requireNoTasks(t)
	})
}
