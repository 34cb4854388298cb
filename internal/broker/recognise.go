package broker

import (
	"strings"

	"github.com/redis/go-redis/v9"
)

// The recognisers below tell asynq's own scripts apart as they pass through
// a go-redis hook. asynq runs every script with go-redis's Script.Run, which
// sends EVALSHA sha numkeys key... arg... (or EVAL with the source when the
// script is not cached), so the keys start at argument 3. The contract test
// feeds them the commands the real asynq sends.

type scriptKind int

const (
	other scriptKind = iota
	// dequeue is asynq's dequeue script, on KEYS (pending, paused, active,
	// lease) of one queue, with ARGV (lease end in Unix seconds, task key
	// prefix). It returns the task's message, or nil when the queue is empty
	// or paused.
	dequeue
	// forward is asynq's forward script, on KEYS (scheduled or retry,
	// pending) of one queue. It returns how many due tasks it moved.
	forward
)

// isScript reports whether cmd runs a Lua script with at least two keys.
func isScript(cmd redis.Cmder) bool {
	if name := cmd.Name(); name != "evalsha" && name != "eval" {
		return false
	}
	return len(cmd.Args()) >= 5
}

// classify recognises asynq's dequeue and forward scripts by their first two
// keys, and returns the queue they work on.
func classify(cmd redis.Cmder) (scriptKind, string) {
	if !isScript(cmd) {
		return other, ""
	}
	args := cmd.Args()
	k1, _ := args[3].(string)
	k2, _ := args[4].(string)
	switch {
	case strings.HasSuffix(k1, ":pending") && strings.HasSuffix(k2, ":paused"):
		return dequeue, queueOf(k1)
	case (strings.HasSuffix(k1, ":scheduled") || strings.HasSuffix(k1, ":retry")) && strings.HasSuffix(k2, ":pending"):
		return forward, queueOf(k1)
	}
	return other, ""
}

// retarget points a dequeue command of queue from at queue to instead. The
// script's keys and task key prefix all start with asynq's "asynq:{queue}:";
// the task it returns carries its own queue name, which is what asynq uses
// from then on.
func retarget(cmd redis.Cmder, from, to string) {
	if from == to {
		return
	}
	oldPrefix, newPrefix := key(from, ""), key(to, "")
	args := cmd.Args()
	for i := 3; i < len(args); i++ {
		if s, ok := args[i].(string); ok && strings.HasPrefix(s, oldPrefix) {
			args[i] = newPrefix + strings.TrimPrefix(s, oldPrefix)
		}
	}
}

// aggregationSetDeleted recognises asynq's DeleteAggregationSet script, run
// by the aggregator right after it stored the aggregated task, by its two
// keys (asynq:{q}:g:<group>:<set id>, asynq:{q}:aggregation_sets), and
// returns the queue.
func aggregationSetDeleted(cmd redis.Cmder) (string, bool) {
	if !isScript(cmd) {
		return "", false
	}
	args := cmd.Args()
	if n, ok := args[2].(int); !ok || n != 2 {
		return "", false
	}
	set, _ := args[3].(string)
	sets, _ := args[4].(string)
	q := queueOf(set)
	if !strings.HasPrefix(set, groupKeyPrefix(q)) || sets != AggregationSetsKey(q) {
		return "", false
	}
	return q, true
}
