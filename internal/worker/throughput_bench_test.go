package worker_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/test/redistest"
)

// BenchmarkSaturatedThroughput measures one in-process worker with its
// limits out of the way: a bot-wide limit far above what it can reach and
// every message to a chat of its own, at a fake whose own limits are off.
// The messages are enqueued before the clock starts; it reports delivered
// messages per second and the Redis commands (INFO commandstats, those run
// inside scripts included) per message. Run it with -cpuprofile to see the
// worker's own overhead.
func BenchmarkSaturatedThroughput(b *testing.B) {
	lim := ratelimit.Config{Bot: ratelimit.Per(10000, time.Second), Private: ratelimit.Per(1, time.Second),
		Group: ratelimit.Per(1, time.Second)}
	bb := setupTB(b, options{limits: &lim, fakeUnlimited: true, stopped: true})
	n := max(b.N, 2000)
	_, by00 := commandCount(b, bb.rdb)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if _, err := bb.enq.Enqueue(bb.ctx, jobs.Request{Message: jobs.SendMessage{Chat: strconv.Itoa(100000 + i), Text: "t" + strconv.Itoa(i)}}); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	before, by0 := commandCount(b, bb.rdb)
	cpu0 := redisCPU(b, bb.rdb)
	b.Logf("enqueue: Redis commands per message: %s", perMessage(by00, by0, n))
	b.ResetTimer()
	start := time.Now()
	bb.start(b)
	if err := bb.fake.Wait(bb.ctx, n); err != nil {
		b.Fatal(err)
	}
	el := time.Since(start)
	b.StopTimer()
	after, by1 := commandCount(b, bb.rdb)
	b.ReportMetric(float64((redisCPU(b, bb.rdb)-cpu0).Microseconds())/float64(n), "redis-cpu-µs/msg")
	cmds := after - before
	if testing.Verbose() {
		st, _ := bb.rdb.Info(bb.ctx, "commandstats").Result()
		b.Logf("commandstats after the run:\n%s", st)
	}
	b.Logf("%d messages in %v; the worker's Redis commands per message: %s", n, el.Round(time.Millisecond), perMessage(by0, by1, n))
	b.ReportMetric(float64(n)/el.Seconds(), "msg/s")
	b.ReportMetric(float64(cmds)/float64(n), "cmds/msg")
	b.ReportMetric(0, "ns/op")
}

// perMessage lists the commands by name between two counts, per message.
func perMessage(before, after map[string]int64, n int) string {
	var per []string
	for name, c := range after {
		if d := c - before[name]; d > 0 {
			per = append(per, fmt.Sprintf("%s=%.2f", name, float64(d)/float64(n)))
		}
	}
	slices.Sort(per)
	return strings.Join(per, " ")
}

// redisCPU is the CPU time Redis has used (INFO cpu, user and system).
func redisCPU(tb testing.TB, rdb *redis.Client) time.Duration {
	s, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return time.Duration(total * float64(time.Second))
}

// commandCount is the total of INFO commandstats, less the INFO calls,
// and the calls by command.
func commandCount(tb testing.TB, rdb *redis.Client) (int64, map[string]int64) {
	by, err := redistest.CommandCalls(context.Background(), rdb)
	if err != nil {
		tb.Fatal(err)
	}
	var total int64
	for _, c := range by {
		total += c
	}
	return total, by
}
