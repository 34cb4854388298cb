package broker

import (
	"math"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// doneScript does what asynq's done script does when a handler succeeds and
// the task is not retained, one command fewer: asynq's reads the queue's
// processed total (GET) to see whether the next INCR would overflow, and
// then SETs it to 1 or INCRs it; here the INCR runs at once and only when
// Redis refuses it for overflow is the total SET to 1. Every other error,
// reply and key is asynq's.
//
// KEYS[1] asynq:{q}:active, KEYS[2] asynq:{q}:lease, KEYS[3] asynq:{q}:t:<id>,
// KEYS[4] asynq:{q}:processed:<yyyy-mm-dd>, KEYS[5] asynq:{q}:processed.
// ARGV[1] the task id, ARGV[2] when the daily count expires (Unix seconds),
// ARGV[3] math.MaxInt64 (asynq's; unused).
// Returns OK, or the error "NOT FOUND" when the task is not active, has no
// lease or no hash, as asynq's does.
var doneScript = redis.NewScript(doneSource)

// doneUniqueScript is doneScript for a task that holds a uniqueness lock:
// it also deletes the lock when it still holds the task's id, as asynq's
// does.
//
// KEYS and ARGV as doneScript's, and KEYS[6] the lock,
// asynq:{q}:unique:<type>:<payload checksum>.
// Returns as doneScript.
var doneUniqueScript = redis.NewScript(doneUniqueSource)

// doneSettle is what both done scripts run first; it uses redis.pcall for
// the total's INCR so that an overflow can be told from other errors.
const doneSettle = `
if redis.call('LREM', KEYS[1], 0, ARGV[1]) == 0 then
  return redis.error_reply('NOT FOUND')
end
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
  return redis.error_reply('NOT FOUND')
end
if redis.call('DEL', KEYS[3]) == 0 then
  return redis.error_reply('NOT FOUND')
end
if redis.call('INCR', KEYS[4]) == 1 then
  redis.call('EXPIREAT', KEYS[4], ARGV[2])
end
local total = redis.pcall('INCR', KEYS[5])
if type(total) == 'table' and total.err then
  if not string.find(total.err, 'overflow', 1, true) then
    return total
  end
  redis.call('SET', KEYS[5], 1)
end
`

const doneSource = doneSettle + `return redis.status_reply('OK')
`

const doneUniqueSource = doneSettle + `if redis.call('GET', KEYS[6]) == ARGV[1] then
  redis.call('DEL', KEYS[6])
end
return redis.status_reply('OK')
`

// doneHook swaps asynq's done script, run once for every task that
// succeeds and is not retained, for doneScript or doneUniqueScript, as
// heartbeatHook does for the heartbeat (scriptSwap). Keys and arguments
// stay asynq's, so the processed counts asynq's Inspector and the metrics
// read move as before. The contract test runs the real asynq server
// through the hook and checks them.
func doneHook() redis.Hook {
	return scriptSwap(func(cmd redis.Cmder) (*redis.Script, string, bool) {
		ok, unique := marksDone(cmd)
		if unique {
			return doneUniqueScript, doneUniqueSource, ok
		}
		return doneScript, doneSource, ok
	})
}

// marksDone recognises asynq's done script by its keys, all of one queue
// (active, lease, the hash of the task ARGV[1] names, a daily and the total
// processed count, and for unique the task's lock), and its three
// arguments, the last math.MaxInt64. asynq's script that keeps a completed
// task (markAsComplete) has the completed set third and five arguments, and
// is left alone, as is any script that differs in a key.
func marksDone(cmd redis.Cmder) (ok, unique bool) {
	if !isScript(cmd) {
		return false, false
	}
	args := cmd.Args()
	n, isInt := args[2].(int)
	if !isInt || (n != 5 && n != 6) || len(args) != 3+n+3 {
		return false, false
	}
	k := func(i int) string {
		s, _ := args[3+i].(string)
		return s
	}
	id, _ := args[3+n].(string)
	if limit, _ := args[3+n+2].(int64); id == "" || limit != math.MaxInt64 {
		return false, false
	}
	q := queueOf(k(0))
	if q == "" || k(0) != ActiveKey(q) || k(1) != LeaseKey(q) || k(2) != taskKey(q, id) ||
		!isDailyProcessedKey(q, k(3)) || k(4) != processedTotalKey(q) {
		return false, false
	}
	if n == 6 && !strings.HasPrefix(k(5), key(q, "unique:")) {
		return false, false
	}
	return true, n == 6
}

// processedTotalKey counts queue's tasks processed (succeeded or failed)
// ever; asynq's Inspector reports it as ProcessedTotal.
func processedTotalKey(queue string) string { return key(queue, "processed") }

// isDailyProcessedKey reports whether k is queue's count of the tasks
// processed on one UTC day, asynq:{queue}:processed:<yyyy-mm-dd>.
func isDailyProcessedKey(queue, k string) bool {
	day, ok := strings.CutPrefix(k, processedTotalKey(queue)+":")
	if !ok || len(day) != len("2006-01-02") {
		return false
	}
	_, err := time.Parse("2006-01-02", day)
	return err == nil
}
