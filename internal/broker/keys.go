package broker

import "strings"

// asynq v0.26 keeps each queue's state under "asynq:{<queue>}:", the queue's
// name being the Redis Cluster hash tag, so that one script may touch every
// key of one queue. Every key name of asynq's that Herald reads or writes is
// built here, by key; the contract test pins them against the real asynq.

// key names one of queue's keys: asynq:{queue}:suffix.
func key(queue, suffix string) string { return "asynq:{" + queue + "}:" + suffix }

// queueOf returns the queue name in an asynq key "asynq:{queue}:...", or ""
// when key is none of asynq's.
func queueOf(key string) string {
	i := strings.IndexByte(key, '{')
	j := strings.IndexByte(key, '}')
	if i < 0 || j < i {
		return ""
	}
	return key[i+1 : j]
}

// PendingKey is the list of queue's tasks ready to run. asynq pushes new
// tasks on the left and pops the next one from the right: the right end is
// the head.
func PendingKey(queue string) string { return key(queue, "pending") }

// ActiveKey is the list of queue's tasks being handled.
func ActiveKey(queue string) string { return key(queue, "active") }

// LeaseKey is the sorted set of queue's active tasks, scored by the Unix
// second their lease ends.
func LeaseKey(queue string) string { return key(queue, "lease") }

// retryKey is the sorted set of queue's tasks waiting to be retried, scored
// by the Unix second they are due.
func retryKey(queue string) string { return key(queue, "retry") }

// taskKeyPrefix starts the key of every task hash of queue; the task id
// follows it.
func taskKeyPrefix(queue string) string { return key(queue, "t:") }

// taskKey is the hash holding one task: its encoded message ("msg"), its
// "state" ("pending", "active", "retry", ...) and, while pending, since when
// ("pending_since", Unix nanoseconds), which asynq's queue latency reads.
func taskKey(queue, id string) string { return taskKeyPrefix(queue) + id }

// GroupsKey is the set of group names with tasks waiting in queue.
func GroupsKey(queue string) string { return key(queue, "groups") }

// groupKeyPrefix starts the key of every group of queue; the group name
// follows it.
func groupKeyPrefix(queue string) string { return key(queue, "g:") }

// GroupKey is the sorted set of the tasks waiting in one group of queue,
// scored by the Unix second each was added.
func GroupKey(queue, group string) string { return groupKeyPrefix(queue) + group }

// AggregationSetKey is a group's tasks taken out for one aggregation run.
func AggregationSetKey(queue, group, setID string) string {
	return GroupKey(queue, group) + ":" + setID
}

// AggregationSetsKey is the sorted set of queue's aggregation sets, scored
// by the Unix second by which their aggregation must have finished
// (creation + AggregationTimeout).
func AggregationSetsKey(queue string) string { return key(queue, "aggregation_sets") }
