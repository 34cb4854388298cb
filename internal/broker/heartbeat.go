package broker

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// serverStateScript does what asynq's own server-state script does on each
// heartbeat (every 5 s), in a fixed number of commands: asynq's writes the
// workers hash one HSET per running task, and a worker process of Herald's
// holds many tasks that sleep through their wait for a send slot, so that
// loop was most of an idle fleet's Redis traffic during a long drain. Here
// the fields go in HSETs of up to 1000 pairs each.
//
// KEYS[1] asynq:servers:{<host:pid:sid>}, KEYS[2] asynq:workers:{<host:pid:sid>}.
// ARGV[1] TTL in seconds, ARGV[2] the encoded server info, then one pair per
// running task: its id and its encoded worker info.
// Returns OK, as asynq's does.
var serverStateScript = redis.NewScript(serverStateSource)

const serverStateSource = `
redis.call('SETEX', KEYS[1], ARGV[1], ARGV[2])
redis.call('DEL', KEYS[2])
local last = #ARGV - ((#ARGV - 2) % 2)
for i = 3, last, 2000 do
  redis.call('HSET', KEYS[2], unpack(ARGV, i, math.min(i + 1999, last)))
end
redis.call('EXPIRE', KEYS[2], ARGV[1])
return redis.status_reply('OK')
`

// heartbeatHook swaps asynq's server-state script for serverStateScript as
// the calls pass through the go-redis client (see scriptSwap). Keys and
// arguments are asynq's, so the web UI and asynq's Inspector read the same
// hashes as before. The contract test runs the real asynq server through
// the hook and checks the servers and workers it reports.
func heartbeatHook() redis.Hook {
	return scriptSwap(func(cmd redis.Cmder) (*redis.Script, string, bool) {
		return serverStateScript, serverStateSource, writesServerState(cmd)
	})
}

// scriptSwap is a go-redis hook that runs one of Herald's scripts in place
// of an asynq script that the function recognises: an EVALSHA gets the
// other script's hash (go-redis falls back to EVAL when Redis does not know
// it yet), an EVAL the other source. Nothing else about the call changes.
type scriptSwap func(cmd redis.Cmder) (script *redis.Script, source string, ok bool)

func (scriptSwap) DialHook(next redis.DialHook) redis.DialHook { return next }

func (scriptSwap) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (swap scriptSwap) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if script, source, ok := swap(cmd); ok {
			args := cmd.Args()
			switch cmd.Name() {
			case "evalsha":
				args[1] = script.Hash()
			case "eval":
				args[1] = source
			}
		}
		return next(ctx, cmd)
	}
}

// writesServerState recognises asynq's server-state script by its two keys
// (asynq:servers:{…}, asynq:workers:{…}) and its arguments (TTL and server
// info at least); asynq's script that clears the same keys at shutdown has
// no arguments and is left alone.
func writesServerState(cmd redis.Cmder) bool {
	if !isScript(cmd) {
		return false
	}
	args := cmd.Args()
	if n, ok := args[2].(int); !ok || n != 2 || len(args) < 7 {
		return false
	}
	k1, _ := args[3].(string)
	k2, _ := args[4].(string)
	return strings.HasPrefix(k1, "asynq:servers:{") && strings.HasPrefix(k2, "asynq:workers:{")
}
