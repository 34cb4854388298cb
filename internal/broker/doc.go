// Package broker is Herald's one room for asynq (v0.26, on Redis): the only
// package that knows how asynq lays out its state in Redis and which scripts
// it runs there. Everything else uses asynq's public API and the small
// surface below; contract_test.go runs the real asynq client and server
// against a real redis-server and fails loudly when an asynq upgrade moves
// anything this package relies on.
//
// # The layout it relies on
//
// Each queue's state lives under "asynq:{queue}:" (keys.go builds every
// name): a pending list that asynq fills on the left and pops from the right
// (so the right end is the head), an active list with a lease sorted set
// scored by the Unix second each lease ends (LeaseDuration ahead, extended
// every 5 s while the task runs), retry and scheduled sets scored by the Unix
// second a task is due, one hash per task with its "state" and
// "pending_since" fields, and for grouped tasks a set of group names, one
// sorted set per group and aggregation sets scored by creation +
// AggregationTimeout.
//
// # Wake-up (wake.go, notify.go, recognise.go)
//
// asynq's processor polls: when every queue is empty it sleeps about
// TaskCheckInterval before it asks Redis again, and moves due retries back to
// their queues on a timer of its own. Herald instead runs the processor with
// a tiny TaskCheckInterval and installs a go-redis hook (Waker.Hook) on the
// worker's Redis client. The hook recognises asynq's dequeue script by its
// keys; when a dequeue round finds every queue empty, it holds the round in a
// blocking pop on Herald's wake list until there is news: a token a producer
// pushed after an enqueue (Notify; Notifier pushes the tokens of a
// producer's concurrent requests in one LPUSH), a local wake-up (a deferred task made
// due, a forward of due tasks seen on the same client, recognised by the
// forward script's keys) pushed to the worker's own inbox, or a second
// elapsing (the next round is then answered from the empty marks below,
// without a round trip). Each token wakes exactly one idle worker, and busy
// workers take none, so a fleet does not stampede on every message. When news ends a held
// round, the hook rewrites the dequeue call's keys to the queue the news was
// about, so the task is taken at once.
//
// The hook also remembers which queues were found empty and answers their
// dequeue calls itself (redis.Nil, as asynq's script would), without a round
// trip, until news for that queue arrives or MaxIdle passes. Tasks that
// reach a queue without news (asynq's recoverer, a client that does not
// notify) are therefore seen within MaxIdle at worst. newDigestWakeHook does the
// same for digests: it recognises the script with which asynq's aggregator
// deletes an aggregation set, right after storing the digest task, and
// notifies the queue.
//
// asynq asks for the next task as soon as it has one. The dequeue of a
// round that news ended therefore goes with an LLEN of the queue's pending
// list, in the same round trip: when the task it took was the last, the
// queue is marked empty there and then, and the worker's next round is held
// rather than finding that out from Redis, so a task that comes with news
// costs one dequeue, not two. A backlog (LLEN above zero) is dequeued from
// at once, news or not: the wake list is trimmed, so tokens may be fewer
// than tasks.
//
// A dequeue whose queue's node does not answer (down, failing over) would
// end asynq's whole round, so tasks of queues on healthy nodes would wait
// as well: the hook answers that queue empty for a second instead, and the
// round goes on. A blocking pop that fails, or that a hung node keeps
// past its second (go-redis waits 10 s more for a blocking command's
// answer), ends the held round: the empty marks are forgotten, since the
// producers' news may now land on a promoted replica the worker does not
// yet listen to, and the next round asks every queue.
//
// # The heartbeat (heartbeat.go)
//
// Every 5 s asynq writes each process's state: the server's record and a
// hash with one field per running task, which the web UI lists. Its script
// sets those fields one HSET each, and a Herald worker runs many tasks that
// sleep through their wait for a send slot (up to 256 per process).
// heartbeatHook swaps in a script that writes the same keys in a fixed
// number of commands.
//
// # Done (done.go)
//
// When a task succeeds and is not kept, asynq's done script takes it out of
// the active list and lease set, deletes its hash and counts it in the
// queue's daily and total processed counts; for the total it reads the
// count first, to wrap it to 1 instead of overflowing. doneHook swaps in a
// script that increments the total at once and wraps it only when Redis
// refuses the increment: one command fewer for every message delivered,
// with asynq's keys, replies and counts.
//
// # Scripts of Herald's on asynq's keys
//
// Each is a package-level redis.NewScript whose comment lists its KEYS, ARGV
// and reply; each runs on the keys of one queue, so one hash slot.
//
//   - promoter (promote.go) snoozes a task: the worker hands it back to asynq
//     as a retry with backstopDelay, and at the exact due time the promoter
//     moves it from the retry set to the head of pending. asynq's forwarder,
//     with one-second resolution and appending to the tail, is the backstop
//     should the process die.
//   - leaseSweeper (leasesweep.go) requeues, at the head of pending, the
//     active tasks whose lease has not been extended for a while: their
//     worker died or froze. asynq's recoverer does the same only 30 s after
//     the lease ended, checked once a minute.
//   - reclaimer (reclaim.go) puts the tasks of aggregation sets left behind
//     by a dead aggregator back into their groups and lists the groups again,
//     sooner than asynq's recoverer, which forgets the latter.
//
// promoter, leaseSweeper and reclaimer each run until their context ends
// (Run); the promoter hands its pending promotions over at shutdown
// (HandOver).
package broker
