package producer

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
)

// Exit codes of `producer send`.
const (
	// exitStored: the message is in Redis (or was already, for a repeated
	// idempotency key); the task id is printed as JSON.
	exitStored = 0
	// ExitNotStored: Redis did not take the message (unreachable, refused
	// the write), so running the command again is safe; or the master took
	// it but its replicas did not confirm it in time
	// (HERALD_REDIS_WAIT_TIMEOUT), when a repeat is safe with the same
	// --idempotency-key.
	ExitNotStored = 1
	// ExitUsage: bad flags or an invalid message; fix the command line.
	ExitUsage = 2
)

const sendUsage = `usage: producer send --chat ID [--bot NAME] [flags] "text"   (or the text on stdin)

Enqueues one message straight into Redis (REDIS_URL). Flags may come before
or after the text; put "--" before a text that starts with "-".
Exit codes: 0 stored (the task id is printed as JSON), 1 not stored (Redis
unreachable; safe to retry), 2 bad usage or invalid message (fix the command).

Flags:`

// Send runs `producer send`: it enqueues one message straight into Redis and
// prints the task id as JSON. The text is the positional arguments joined by
// spaces, or standard input when there are none (or a single "-"). Flags are
// accepted anywhere among the arguments. Every failure is one line on
// stderr starting with "producer send: ". It returns the process exit code:
// exitStored, ExitNotStored or ExitUsage.
func Send(ctx context.Context, enq *jobs.Enqueuer, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported below, in one line
	var req messageRequest
	var chat string
	fs.StringVar(&chat, "chat", "", "destination: numeric chat id or @channel (required)")
	fs.StringVar(&req.Bot, "bot", "", "the bot that sends it, one of HERALD_BOTS (default: the bot \"default\")")
	fs.StringVar(&req.ParseMode, "parse-mode", "", "none, HTML or MarkdownV2 (markup that will not parse is refused)")
	fs.StringVar(&req.Queue, "queue", "", "priority queue: critical, default or low")
	fs.StringVar(&req.IdempotencyKey, "idempotency-key", "", "a repeated key within the idempotency window is not sent twice")
	fs.BoolVar(&req.DisableNotification, "silent", false, "deliver without a notification sound")
	fs.IntVar(&req.MessageThreadID, "thread", 0, "forum topic (message_thread_id)")
	fs.BoolVar(&req.DisableLinkPreview, "no-preview", false, "turn link previews off")
	fs.BoolVar(&req.ProtectContent, "protect", false, "protect the message from forwarding and saving")
	words, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stderr, sendUsage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return exitStored
	case err != nil:
		fmt.Fprintf(stderr, "producer send: %v (see producer send -h; settings such as -redis-url go before \"send\", or in the environment)\n", err)
		return ExitUsage
	}
	text := strings.Join(words, " ")
	if len(words) == 0 || text == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, 4<<20))
		if err != nil {
			fmt.Fprintf(stderr, "producer send: read stdin: %v\n", err)
			return ExitNotStored
		}
		text = strings.TrimRight(string(b), "\n")
	}
	ctx = durable.Track(ctx)
	res, err := enq.Enqueue(ctx, jobs.Request{Queue: req.Queue, CheckMarkup: true, Message: jobs.SendMessage{
		Chat: chat, Bot: req.Bot, Text: text, ParseMode: req.ParseMode,
		DisableNotification: req.DisableNotification, MessageThreadID: req.MessageThreadID,
		DisableLinkPreview: req.DisableLinkPreview, ProtectContent: req.ProtectContent,
		IdempotencyKey: req.IdempotencyKey,
	}, ThreadSpace: jobs.CLIThreadSpace})
	var verr *jobs.ValidationError
	switch {
	case errors.As(err, &verr):
		for _, f := range verr.Fields {
			fmt.Fprintf(stderr, "producer send: --%s: %s\n", flagFor(f.Field), f.Message)
		}
		return ExitUsage
	case err != nil:
		fmt.Fprintf(stderr, "producer send: not stored: %s\n", describeUnavailable(err))
		return ExitNotStored
	}
	if err := enq.Settle(ctx, heraldSlot); err != nil {
		// Exit 1 promises that running the command again is safe, which
		// holds with an idempotency key.
		fmt.Fprintf(stderr, "producer send: not confirmed stored (%v); run it again with the same --idempotency-key\n", err)
		return ExitNotStored
	}
	_ = json.NewEncoder(stdout).Encode(res)
	return exitStored
}

// parseInterspersed parses flags found anywhere in args and returns the
// other arguments in order. Everything after "--" is an argument.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(words, rest...), nil
		}
		if len(rest) == 0 {
			return words, nil
		}
		words = append(words, rest[0])
		args = rest[1:]
	}
}

// describeUnavailable says in one line why Redis did not take the message:
// the address it could not reach, or the error Redis gave.
func describeUnavailable(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		addr := ""
		if op.Addr != nil {
			addr = " at " + op.Addr.String()
		}
		cause := op.Err
		if cause == nil {
			cause = op
		}
		return fmt.Sprintf("cannot reach Redis%s (%v); is it running, and is REDIS_URL right?", addr, unwrapSyscall(cause))
	}
	return err.Error()
}

// unwrapSyscall turns "connect: connection refused" into "connection refused".
func unwrapSyscall(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
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
