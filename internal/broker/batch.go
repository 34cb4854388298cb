package broker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/encoding/protowire"
)

// BatchTask is one task of EnqueueBatch: its id (unique within the queue),
// its type and its payload.
type BatchTask struct {
	ID      string
	Type    string
	Payload []byte
}

// BatchOptions are the asynq options every task of a batch gets, as
// asynq.Queue, asynq.MaxRetry, asynq.Timeout and asynq.Retention set them
// for one task.
type BatchOptions struct {
	Queue     string
	MaxRetry  int
	Timeout   time.Duration
	Retention time.Duration
}

// BatchChunk is how many tasks EnqueueBatch sends in one pipeline: one
// round trip per chunk.
const BatchChunk = 1000

// enqueueScript is asynq's own enqueue script (rdb.Enqueue, asynq v0.26),
// word for word: a task id that exists already is left alone.
//
// KEYS[1] -> asynq:{<queue>}:t:<task id>
// KEYS[2] -> asynq:{<queue>}:pending
// ARGV[1] -> the encoded task message
// ARGV[2] -> the task id
// ARGV[3] -> now, Unix nanoseconds
// Reply: 1 when enqueued, 0 when the task id exists.
var enqueueScript = redis.NewScript(`
if redis.call("EXISTS", KEYS[1]) == 1 then
	return 0
end
redis.call("HSET", KEYS[1],
           "msg", ARGV[1],
           "state", "pending",
           "pending_since", ARGV[3])
redis.call("LPUSH", KEYS[2], ARGV[2])
return 1
`)

// allQueuesKey is asynq's set of every queue's name, which its web UI and
// Inspector list.
const allQueuesKey = "asynq:queues"

// EnqueueBatch stores tasks in opts.Queue as asynq's client would, one by
// one, but pipelined: BatchChunk tasks per round trip, each through asynq's
// enqueue script, so a task whose id the queue holds already is skipped.
// It returns how many tasks it added. A chunk that Redis refused may have
// been stored in part; calling EnqueueBatch again with the same tasks
// completes it and adds nothing twice.
func EnqueueBatch(ctx context.Context, rdb redis.UniversalClient, opts BatchOptions, tasks []BatchTask) (added int, err error) {
	if opts.Queue == "" {
		return 0, errors.New("broker: EnqueueBatch needs a queue")
	}
	if len(tasks) == 0 {
		return 0, nil
	}
	if err := rdb.SAdd(ctx, allQueuesKey, opts.Queue).Err(); err != nil {
		return 0, fmt.Errorf("broker: list queue %s: %w", opts.Queue, err)
	}
	for start := 0; start < len(tasks); start += BatchChunk {
		chunk := tasks[start:min(start+BatchChunk, len(tasks))]
		n, err := enqueueChunk(ctx, rdb, opts, chunk)
		if isNoScript(err) {
			// A restarted or failed-over Redis forgot the script: load it
			// and send the chunk again (tasks stored already are skipped).
			if err = enqueueScript.Load(ctx, rdb).Err(); err == nil {
				n, err = enqueueChunk(ctx, rdb, opts, chunk)
			}
		}
		added += n
		if err != nil {
			return added, fmt.Errorf("broker: enqueue tasks %d-%d of %d into %s: %w", start, start+len(chunk)-1, len(tasks), opts.Queue, err)
		}
	}
	return added, nil
}

// enqueueChunk sends one pipeline of enqueue scripts.
func enqueueChunk(ctx context.Context, rdb redis.UniversalClient, opts BatchOptions, chunk []BatchTask) (int, error) {
	now := time.Now().UnixNano()
	pending := PendingKey(opts.Queue)
	cmds := make([]*redis.Cmd, len(chunk))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, t := range chunk {
			cmds[i] = enqueueScript.EvalSha(ctx, p, []string{taskKey(opts.Queue, t.ID), pending},
				encodeTaskMessage(t, opts), t.ID, now)
		}
		return nil
	})
	added := 0
	for _, c := range cmds {
		if n, e := c.Int(); e == nil && n == 1 {
			added++
		}
	}
	return added, err
}

// isNoScript reports Redis' answer to EVALSHA of a script it does not hold.
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// The field numbers of asynq's TaskMessage (internal/proto/asynq.proto in
// asynq v0.26) that a new pending task carries.
const (
	tmType      protowire.Number = 1
	tmPayload   protowire.Number = 2
	tmID        protowire.Number = 3
	tmQueue     protowire.Number = 4
	tmRetry     protowire.Number = 5
	tmTimeout   protowire.Number = 8
	tmRetention protowire.Number = 12
)

// encodeTaskMessage is the protobuf form of the TaskMessage asynq's client
// writes for t with opts: proto3 leaves zero values out, and a task with
// neither a timeout nor a deadline gets asynq's default timeout, as
// Client.Enqueue gives it.
func encodeTaskMessage(t BatchTask, opts BatchOptions) []byte {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = defaultAsynqTimeout
	}
	b := make([]byte, 0, len(t.Payload)+len(t.Type)+len(t.ID)+len(opts.Queue)+24)
	b = appendString(b, tmType, t.Type)
	if len(t.Payload) > 0 {
		b = protowire.AppendTag(b, tmPayload, protowire.BytesType)
		b = protowire.AppendBytes(b, t.Payload)
	}
	b = appendString(b, tmID, t.ID)
	b = appendString(b, tmQueue, opts.Queue)
	b = appendVarint(b, tmRetry, uint64(int32(opts.MaxRetry)))
	b = appendVarint(b, tmTimeout, uint64(int64(timeout.Seconds())))
	return appendVarint(b, tmRetention, uint64(int64(opts.Retention.Seconds())))
}

// defaultAsynqTimeout is asynq's timeout of a task enqueued with neither a
// timeout nor a deadline.
const defaultAsynqTimeout = 30 * time.Minute

func appendString(b []byte, n protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendVarint(b []byte, n protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}
