package broker

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/test/redistest"
)

// TestContractDone: with doneHook on its client, the real asynq server
// settles succeeded tasks with Herald's done scripts (Redis has both
// cached): the tasks and their hashes are gone, a unique task's lock is
// released, and asynq's Inspector, which the web UI and the metrics read,
// counts every task processed, today and in total, on one server and on a
// Redis Cluster. asynq's script that keeps a retained task as completed is
// left alone and still works.
func TestContractDone(t *testing.T) {
	t.Parallel()
	onServerAndCluster(t, checkDone)
}

// checkDone runs an asynq server on rdb with the hook over plain, unique
// and retained tasks and checks what it left. node is where the scripts
// are looked for (nil: the master of the queue's slot).
func checkDone(t *testing.T, rdb redis.UniversalClient, node redis.Scripter) {
	ctx := context.Background()
	rec := &recorder{}
	rdb.AddHook(rec)
	rdb.AddHook(doneHook())
	const q, plain = "default", 3
	client := asynq.NewClientFromRedisClient(rdb)
	var ids []string
	for i := range plain {
		id := fmt.Sprint("done-", i)
		if _, err := client.Enqueue(asynq.NewTask("t", nil), asynq.Queue(q), asynq.TaskID(id)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := client.Enqueue(asynq.NewTask("t", []byte("u")), asynq.Queue(q), asynq.TaskID("unique"), asynq.Unique(time.Hour)); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum([]byte("u"))
	lock := key(q, "unique:t:"+hex.EncodeToString(sum[:]))
	if got := rdb.Get(ctx, lock).Val(); got != "unique" {
		t.Fatalf("%s = %q, want the unique task's id (asynq moved its lock)", lock, got)
	}
	if _, err := client.Enqueue(asynq.NewTask("t", nil), asynq.Queue(q), asynq.TaskID("kept"), asynq.Retention(time.Hour)); err != nil {
		t.Fatal(err)
	}
	const total = plain + 2
	handled := serveIDs(t, rdb, q, total)
	for range total {
		receive(t, handled, "a task to be handled")
	}
	insp := asynq.NewInspectorFromRedisClient(rdb)
	var info *asynq.QueueInfo
	waitFor(t, "asynq to count every task processed", func() bool {
		var err error
		info, err = insp.GetQueueInfo(q)
		return err == nil && info.Active == 0 && info.Completed == 1
	})
	if info.Processed != total || info.ProcessedTotal != total || info.Failed != 0 || info.Pending != 0 {
		t.Errorf("queue info: processed %d today, %d in total, %d failed, %d pending; want %d, %d, 0, 0",
			info.Processed, info.ProcessedTotal, info.Failed, info.Pending, total, total)
	}
	for _, id := range append(ids, "unique") {
		if n := rdb.Exists(ctx, taskKey(q, id)).Val(); n != 0 {
			t.Errorf("task %s's hash is still there", id)
		}
	}
	if n := rdb.Exists(ctx, lock).Val(); n != 0 {
		t.Errorf("the unique task's lock %s is still held", lock)
	}
	if st := rdb.HGet(ctx, taskKey(q, "kept"), "state").Val(); st != "completed" {
		t.Errorf("the retained task's state is %q, want completed", st)
	}

	if node == nil {
		m, err := rdb.(*redis.ClusterClient).MasterForKey(ctx, ActiveKey(q))
		if err != nil {
			t.Fatal(err)
		}
		node = m
	}
	known, err := node.ScriptExists(ctx, doneScript.Hash(), doneUniqueScript.Hash()).Result()
	if err != nil || len(known) != 2 || !known[0] || !known[1] {
		t.Fatalf("Herald's done scripts never ran (SCRIPT EXISTS %v, %v): the hook no longer recognises asynq's", known, err)
	}
	var done, unique, kept int
	for _, c := range rec.snapshot() {
		ok, u := marksDone(c.cmd)
		switch {
		case ok && c.err == nil:
			if c.reply != "OK" {
				t.Errorf("Herald's done script answered %v, want asynq's OK", c.reply)
			}
			if u {
				unique++
			} else {
				done++
			}
		case !ok && argString(c.cmd, 5) == key(q, "completed") && !redis.HasErrorPrefix(c.err, "NOSCRIPT"):
			if c.err != nil {
				t.Errorf("asynq's markAsComplete failed: %v", c.err)
			}
			if h, _ := c.cmd.Args()[1].(string); h == doneScript.Hash() || h == doneUniqueScript.Hash() || h == doneSource || h == doneUniqueSource {
				t.Errorf("markAsComplete ran Herald's done script: %v", c.cmd.Args())
			}
			kept++
		}
	}
	if done != plain || unique != 1 || kept != 1 {
		t.Errorf("recognised %d done and %d unique done calls, and %d markAsComplete calls left alone; want %d, 1, 1",
			done, unique, kept, plain)
	}
}

// TestContractDoneWrapsTotal: when the processed total is at math.MaxInt64,
// the next task asynq completes through Herald's script sets it to 1, as
// asynq's own script does.
func TestContractDoneWrapsTotal(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	rdb.AddHook(doneHook())
	ctx := context.Background()
	const q = "default"
	if err := rdb.Set(ctx, processedTotalKey(q), strconv.FormatInt(math.MaxInt64, 10), 0).Err(); err != nil {
		t.Fatal(err)
	}
	handled := serveIDs(t, rdb, q, 1)
	if _, err := asynq.NewClientFromRedisClient(rdb).Enqueue(asynq.NewTask("t", nil), asynq.Queue(q), asynq.TaskID("wrap")); err != nil {
		t.Fatal(err)
	}
	receive(t, handled, "the task to be handled")
	waitFor(t, "the task to be settled", func() bool { return rdb.Exists(ctx, taskKey(q, "wrap")).Val() == 0 })
	if got := rdb.Get(ctx, processedTotalKey(q)).Val(); got != "1" {
		t.Errorf("processed total after %d is %q, want 1", int64(math.MaxInt64), got)
	}
	if known := rdb.ScriptExists(ctx, doneScript.Hash()).Val(); len(known) != 1 || !known[0] {
		t.Error("Herald's done script never ran")
	}
}

// TestDoneScriptReplies: Herald's done scripts answer asynq's NOT FOUND
// when the task is not active, has no lease or no hash, and fail, as
// asynq's do, on a total that is no integer, counting nothing in it.
func TestDoneScriptReplies(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	const q, id = "default", "x"
	day := key(q, "processed:2024-05-01")
	keys := []string{ActiveKey(q), LeaseKey(q), taskKey(q, id), day, processedTotalKey(q)}
	lock := key(q, "unique:t:")
	argv := []any{id, time.Now().Add(time.Hour).Unix(), int64(math.MaxInt64)}
	// setup leaves the task active with a lease and a hash, less what
	// drop names.
	setup := func(t *testing.T, drop string) {
		t.Helper()
		if err := rdb.FlushDB(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if drop != "active" {
			rdb.LPush(ctx, ActiveKey(q), id)
		}
		if drop != "lease" {
			rdb.ZAdd(ctx, LeaseKey(q), redis.Z{Score: 1, Member: id})
		}
		if drop != "hash" {
			rdb.HSet(ctx, taskKey(q, id), "state", "active")
		}
		rdb.Set(ctx, lock, id, 0)
	}
	run := func(unique bool) error {
		if unique {
			return doneUniqueScript.Run(ctx, rdb, append(keys, lock), argv...).Err()
		}
		return doneScript.Run(ctx, rdb, keys, argv...).Err()
	}
	for _, unique := range []bool{false, true} {
		for _, drop := range []string{"active", "lease", "hash"} {
			setup(t, drop)
			if err := run(unique); err == nil || err.Error() != "NOT FOUND" {
				t.Errorf("unique %v, no %s: %v, want NOT FOUND", unique, drop, err)
			}
			if n := rdb.Exists(ctx, day, processedTotalKey(q)).Val(); n != 0 {
				t.Errorf("unique %v, no %s: counted the task", unique, drop)
			}
		}
		setup(t, "")
		rdb.Set(ctx, processedTotalKey(q), "many", 0)
		if err := run(unique); err == nil || err.Error() == "NOT FOUND" {
			t.Errorf("unique %v, total not an integer: %v, want Redis's error", unique, err)
		}
		if got := rdb.Get(ctx, processedTotalKey(q)).Val(); got != "many" {
			t.Errorf("unique %v: a total that is no integer became %q", unique, got)
		}
		if got := rdb.Get(ctx, lock).Val(); got != id {
			t.Errorf("unique %v: the lock went with the failed script (%q)", unique, got)
		}
		setup(t, "")
		if err := run(unique); err != nil {
			t.Errorf("unique %v: %v", unique, err)
		}
		if got, want := rdb.Exists(ctx, lock).Val(), map[bool]int64{false: 1, true: 0}[unique]; got != want {
			t.Errorf("unique %v: the lock exists %d times after done, want %d", unique, got, want)
		}
		if ttl := rdb.TTL(ctx, day).Val(); ttl <= 0 || ttl > time.Hour {
			t.Errorf("unique %v: the daily count expires in %v, want within the hour ARGV[2] names", unique, ttl)
		}
		if total := rdb.Get(ctx, processedTotalKey(q)).Val(); total != "1" {
			t.Errorf("unique %v: total %q, want 1", unique, total)
		}
	}
}

// TestMarksDone: the hook swaps asynq's done scripts, as asynq sends them,
// and no other: not markAsComplete (the retained task's), retry, requeue,
// the heartbeat, nor a done script whose keys are not one task's of one
// queue.
func TestMarksDone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const mx = int64(math.MaxInt64)
	done := func(args ...any) []any {
		return append([]any{"evalsha", "abc", 5, "asynq:{q}:active", "asynq:{q}:lease", "asynq:{q}:t:id1",
			"asynq:{q}:processed:2024-05-01", "asynq:{q}:processed"}, args...)
	}
	tests := []struct {
		name       string
		args       []any
		ok, unique bool
	}{
		{"done", done("id1", int64(1700000000), mx), true, false},
		{"done by EVAL", append([]any{"eval", "src"}, done("id1", int64(1700000000), mx)[2:]...), true, false},
		{"done unique", []any{"evalsha", "abc", 6, "asynq:{q}:active", "asynq:{q}:lease", "asynq:{q}:t:id1",
			"asynq:{q}:processed:2024-05-01", "asynq:{q}:processed", "asynq:{q}:unique:t:abcd", "id1", int64(1700000000), mx}, true, true},
		{"markAsComplete", []any{"evalsha", "abc", 6, "asynq:{q}:active", "asynq:{q}:lease", "asynq:{q}:completed",
			"asynq:{q}:t:id1", "asynq:{q}:processed:2024-05-01", "asynq:{q}:processed",
			"id1", int64(1700000000), int64(1700003600), "msg", mx}, false, false},
		{"markAsComplete unique", []any{"evalsha", "abc", 7, "asynq:{q}:active", "asynq:{q}:lease", "asynq:{q}:completed",
			"asynq:{q}:t:id1", "asynq:{q}:processed:2024-05-01", "asynq:{q}:processed", "asynq:{q}:unique:t:abcd",
			"id1", int64(1700000000), int64(1700003600), "msg", mx}, false, false},
		{"retry", []any{"evalsha", "abc", 8, "asynq:{q}:t:id1", "asynq:{q}:active", "asynq:{q}:lease", "asynq:{q}:retry",
			"asynq:{q}:processed:2024-05-01", "asynq:{q}:failed:2024-05-01", "asynq:{q}:processed", "asynq:{q}:failed",
			"id1", "msg", int64(1700000000), int64(1700000000), true, mx}, false, false},
		{"requeue", []any{"evalsha", "abc", 4, "asynq:{q}:active", "asynq:{q}:lease", "asynq:{q}:pending", "asynq:{q}:t:id1", "id1"}, false, false},
		{"heartbeat", []any{"evalsha", "abc", 2, "asynq:servers:{h:1:s}", "asynq:workers:{h:1:s}", 10, "info", "id1", "w"}, false, false},
		{"another task's hash", done("id2", int64(1700000000), mx), false, false},
		{"no limit", done("id1", int64(1700000000), int64(1)), false, false},
		{"an argument more", done("id1", int64(1700000000), mx, "x"), false, false},
		{"another queue's total", []any{"evalsha", "abc", 5, "asynq:{q}:active", "asynq:{q}:lease", "asynq:{q}:t:id1",
			"asynq:{q}:processed:2024-05-01", "asynq:{r}:processed", "id1", int64(1700000000), mx}, false, false},
		{"no day", []any{"evalsha", "abc", 5, "asynq:{q}:active", "asynq:{q}:lease", "asynq:{q}:t:id1",
			"asynq:{q}:failed:2024-05-01", "asynq:{q}:processed", "id1", int64(1700000000), mx}, false, false},
		{"no lock", []any{"evalsha", "abc", 6, "asynq:{q}:active", "asynq:{q}:lease", "asynq:{q}:t:id1",
			"asynq:{q}:processed:2024-05-01", "asynq:{q}:processed", "asynq:{q}:pending", "id1", int64(1700000000), mx}, false, false},
		{"plain command", []any{"get", "asynq:{q}:active"}, false, false},
	}
	hook := doneHook().ProcessHook(func(context.Context, redis.Cmder) error { return nil })
	for _, tc := range tests {
		cmd := redis.NewCmd(ctx, append([]any(nil), tc.args...)...)
		if ok, unique := marksDone(cmd); ok != tc.ok || unique != tc.unique {
			t.Errorf("%s: marksDone = %v, %v; want %v, %v", tc.name, ok, unique, tc.ok, tc.unique)
		}
		_ = hook(ctx, cmd)
		want := tc.args[1]
		switch {
		case tc.ok && tc.args[0] == "eval" && tc.unique:
			want = doneUniqueSource
		case tc.ok && tc.args[0] == "eval":
			want = doneSource
		case tc.ok && tc.unique:
			want = doneUniqueScript.Hash()
		case tc.ok:
			want = doneScript.Hash()
		}
		if len(tc.args) > 1 && cmd.Args()[1] != want {
			t.Errorf("%s: the hook sent %v, want %v", tc.name, cmd.Args()[1], want)
		}
		for i := 2; i < len(tc.args); i++ {
			if cmd.Args()[i] != tc.args[i] {
				t.Errorf("%s: the hook changed argument %d to %v", tc.name, i, cmd.Args()[i])
			}
		}
	}
}

// serveIDs runs a real asynq server on rdb for queue q whose handler
// succeeds and reports each task's id on the returned channel (room for n).
func serveIDs(t *testing.T, rdb redis.UniversalClient, q string, n int) <-chan string {
	t.Helper()
	handled := make(chan string, n)
	as := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 2, Queues: map[string]int{q: 1}, TaskCheckInterval: 10 * time.Millisecond, LogLevel: asynq.FatalLevel,
	})
	if err := as.Start(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		handled <- id
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(as.Shutdown)
	return handled
}
