package producer

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
)

const broadcastUsage = `usage: producer broadcast --chats-file FILE [--bot NAME] [flags] "text"   (or the text on stdin)
       producer broadcast status ID   counts, Stars and ETA of broadcast ID (JSON, as GET /v1/broadcasts/{id})
       producer broadcast cancel ID   cancel every message of broadcast ID not sent yet

FILE lists the chats, one numeric id or @username a line ("#" starts a
comment; "-" reads the list from stdin). Every message is stored in Redis
(REDIS_URL) before the broadcast's id is printed as JSON. Exit codes: 0
stored, 1 not stored (Redis unavailable; safe to retry, with the same
--idempotency-key to be sure no chat gets its message twice), 2 bad usage
or invalid broadcast, 3 no such broadcast.

Flags:`

// BroadcastCommand runs `producer broadcast`: it stores a broadcast
// through svc (enq settles it), or with "status ID" or "cancel ID" reads
// or cancels one, printing JSON. It returns the exit code.
func BroadcastCommand(ctx context.Context, svc *broadcast.Service, enq *jobs.Enqueuer, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "status" || args[0] == "cancel") {
		return broadcastAct(ctx, svc, args[0], args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("broadcast", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var req broadcast.Request
	var file string
	fs.StringVar(&file, "chats-file", "", `file of chats, one a line ("-": stdin) (required)`)
	fs.StringVar(&req.Bot, "bot", "", "the bot that sends it, one of HERALD_BOTS (default: the bot \"default\")")
	fs.StringVar(&req.ParseMode, "parse-mode", "", "none, HTML or MarkdownV2 (markup that will not parse is refused)")
	fs.StringVar(&req.IdempotencyKey, "idempotency-key", "", "a repeated key stores nothing twice")
	fs.BoolVar(&req.DisableNotification, "silent", false, "deliver without a notification sound")
	fs.BoolVar(&req.DisableLinkPreview, "no-preview", false, "turn link previews off")
	fs.BoolVar(&req.ProtectContent, "protect", false, "protect the messages from forwarding and saving")
	words, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stderr, broadcastUsage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return exitStored
	case err != nil:
		fmt.Fprintf(stderr, "producer broadcast: %v (see producer broadcast -h)\n", err)
		return ExitUsage
	case file == "":
		fmt.Fprintln(stderr, "producer broadcast: --chats-file is required (see producer broadcast -h)")
		return ExitUsage
	}
	if req.Chats, err = readChats(file, stdin); err != nil {
		fmt.Fprintf(stderr, "producer broadcast: --chats-file: %v\n", err)
		return ExitUsage
	}
	if req.Text, err = broadcastText(words, file, stdin); err != nil {
		fmt.Fprintf(stderr, "producer broadcast: %v\n", err)
		return ExitUsage
	}
	return storeBroadcast(ctx, svc, enq, req, stdout, stderr)
}

// storeBroadcast stores req and prints its result.
func storeBroadcast(ctx context.Context, svc *broadcast.Service, enq *jobs.Enqueuer, req broadcast.Request, stdout, stderr io.Writer) int {
	ctx = durable.Track(ctx)
	res, err := svc.Create(ctx, req)
	var verr *jobs.ValidationError
	switch {
	case errors.As(err, &verr):
		for _, f := range verr.Fields {
			fmt.Fprintf(stderr, "producer broadcast: %s: %s\n", f.Field, f.Message)
		}
		return ExitUsage
	case errors.Is(err, broadcast.ErrOff):
		fmt.Fprintf(stderr, "producer broadcast: %v\n", err)
		return ExitUsage
	case err != nil:
		fmt.Fprintf(stderr, "producer broadcast: not stored: %s\n", describeUnavailable(err))
		return ExitNotStored
	}
	if err := enq.Settle(ctx, heraldSlot); err != nil {
		fmt.Fprintf(stderr, "producer broadcast: not confirmed stored (%v); run it again with the same --idempotency-key\n", err)
		return ExitNotStored
	}
	_ = json.NewEncoder(stdout).Encode(res)
	return exitStored
}

// broadcastText is the text: the words, or stdin when there are none
// (unless stdin holds the chats).
func broadcastText(words []string, file string, stdin io.Reader) (string, error) {
	text := strings.Join(words, " ")
	if len(words) > 0 && text != "-" {
		return text, nil
	}
	if file == "-" {
		return "", errors.New(`the chats come from stdin (--chats-file -): give the text as an argument`)
	}
	b, err := io.ReadAll(io.LimitReader(stdin, 4<<20))
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	return strings.TrimRight(string(b), "\n"), nil
}

// readChats reads a chat list: one chat a line, blank lines and "#"
// comments skipped.
func readChats(file string, stdin io.Reader) ([]string, error) {
	r := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}

// broadcastAct runs `producer broadcast status|cancel ID`, as an operator.
func broadcastAct(ctx context.Context, svc *broadcast.Service, cmd string, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] == "" {
		fmt.Fprintf(stderr, "producer broadcast %s: want one broadcast ID, got %d arguments (see producer broadcast -h)\n", cmd, len(args))
		return ExitUsage
	}
	var st broadcast.Status
	var err error
	if cmd == "status" {
		st, err = svc.Status(ctx, args[0], nil)
	} else {
		st, err = svc.Cancel(ctx, args[0], "cli", nil)
	}
	switch {
	case errors.Is(err, broadcast.ErrNotFound):
		fmt.Fprintf(stderr, "producer broadcast %s: no broadcast %s: unknown, or older than its retention\n", cmd, args[0])
		return ExitNoMessage
	case err != nil:
		fmt.Fprintf(stderr, "producer broadcast %s: %s\n", cmd, describeUnavailable(err))
		return ExitNotStored
	}
	_ = json.NewEncoder(stdout).Encode(st)
	return exitStored
}
