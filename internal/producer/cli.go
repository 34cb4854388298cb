package producer

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/herald-dev/herald/internal/jobs"
)

// Send runs `producer send`: it enqueues one message straight into Redis and
// prints the task id as JSON. The text is the positional arguments joined by
// spaces, or standard input when there are none (or a single "-").
// It returns the process exit code: 0 stored, 1 not stored, 2 bad usage.
func Send(ctx context.Context, enq *jobs.Enqueuer, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var req MessageRequest
	fs.StringVar(&req.Chat, "chat", "", "destination: numeric chat id or @channel (required)")
	fs.StringVar(&req.ParseMode, "parse-mode", "", "none, HTML or MarkdownV2")
	fs.StringVar(&req.Queue, "queue", "", "priority queue: critical, default or low")
	fs.StringVar(&req.IdempotencyKey, "idempotency-key", "", "a repeated key within the idempotency window is not sent twice")
	fs.BoolVar(&req.DisableNotification, "silent", false, "deliver without a notification sound")
	fs.IntVar(&req.MessageThreadID, "thread", 0, "forum topic (message_thread_id)")
	fs.BoolVar(&req.DisableLinkPreview, "no-preview", false, "turn link previews off")
	fs.BoolVar(&req.ProtectContent, "protect", false, "protect the message from forwarding and saving")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: producer send --chat ID [flags] "text"   (or text on stdin)`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	text := strings.Join(fs.Args(), " ")
	if fs.NArg() == 0 || text == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, 4<<20))
		if err != nil {
			fmt.Fprintf(stderr, "producer send: read stdin: %v\n", err)
			return 1
		}
		text = strings.TrimRight(string(b), "\n")
	}
	res, err := enq.Enqueue(ctx, jobs.Request{Queue: req.Queue, Message: jobs.SendMessage{
		Chat: req.Chat, Text: text, ParseMode: req.ParseMode,
		DisableNotification: req.DisableNotification, MessageThreadID: req.MessageThreadID,
		DisableLinkPreview: req.DisableLinkPreview, ProtectContent: req.ProtectContent,
		IdempotencyKey: req.IdempotencyKey,
	}})
	var verr *jobs.ValidationError
	switch {
	case errors.As(err, &verr):
		for _, f := range verr.Fields {
			fmt.Fprintf(stderr, "producer send: --%s: %s\n", flagFor(f.Field), f.Message)
		}
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "producer send: not stored: %v\n", err)
		return 1
	}
	_ = json.NewEncoder(stdout).Encode(res)
	return 0
}

func flagFor(field string) string {
	switch field {
	case "text":
		return "text (argument or stdin)"
	case "parse_mode":
		return "parse-mode"
	case "idempotency_key":
		return "idempotency-key"
	case "message_thread_id":
		return "thread"
	}
	return field
}
