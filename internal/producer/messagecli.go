package producer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/herald-dev/herald/internal/ledger"
)

const messageUsage = `usage: producer status ID   show what became of message ID (JSON, as GET /v1/messages/{id})
       producer cancel ID   cancel message ID if it is not sent yet
       producer retry ID    run failed message ID again, from its first part not sent

ID is the task_id a 202 answered with. The commands read Redis (REDIS_URL)
directly, as an operator. Exit codes: 0 done, 1 Redis unavailable (safe to
retry), 2 bad usage, 3 no such message, 4 too late (sent already, or not
failed).`

// Exit codes of MessageCommand beyond those of Send.
const (
	ExitNoMessage = 3
	ExitTooLate   = 4
)

// MessageCommand runs `producer status ID`, `producer cancel ID` or
// `producer retry ID` (cmd) against the ledger, printing the message's
// status as JSON. It returns the exit code.
func MessageCommand(ctx context.Context, cmd string, msgs *ledger.Messages, args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stderr, messageUsage)
		return exitStored
	}
	if len(args) != 1 || args[0] == "" {
		fmt.Fprintf(stderr, "producer %s: want one message ID, got %d arguments (see producer %s -h)\n", cmd, len(args), cmd)
		return ExitUsage
	}
	id := args[0]
	var st ledger.Status
	var err error
	switch cmd {
	case "status":
		st, err = msgs.Status(ctx, id)
	case "cancel":
		st, err = msgs.Cancel(ctx, id, "cli")
	case "retry":
		st, err = msgs.Retry(ctx, id)
	default:
		fmt.Fprintf(stderr, "producer %s: unknown command (want status, cancel or retry)\n", cmd)
		return ExitUsage
	}
	var late *ledger.TooLateError
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		fmt.Fprintf(stderr, "producer %s: no message %s: unknown, or settled longer ago than %s\n", cmd, id, ledger.EnvRetention)
		return ExitNoMessage
	case errors.As(err, &late):
		fmt.Fprintf(stderr, "producer %s: too late: %s\n", cmd, late.Why)
		_ = json.NewEncoder(stdout).Encode(late.Status)
		return ExitTooLate
	case err != nil:
		fmt.Fprintf(stderr, "producer %s: %s\n", cmd, describeUnavailable(err))
		return ExitNotStored
	}
	_ = json.NewEncoder(stdout).Encode(st)
	return exitStored
}
