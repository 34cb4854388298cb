package worker_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
)

// BenchmarkIdleEnqueueToDelivery measures one message at a time on an idle
// worker, from before the enqueue to the fake Bot API's acceptance, each to
// its own chat. It reports the median and 99th percentile.
func BenchmarkIdleEnqueueToDelivery(b *testing.B) {
	bb := setupB(b)
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := bb.enq.Enqueue(bb.ctx, jobs.Request{Message: jobs.SendMessage{Chat: fmt.Sprint(70000 + i), Text: fmt.Sprint("p", i)}}); err != nil {
			b.Fatal(err)
		}
		if err := bb.fake.Wait(bb.ctx, i+1); err != nil {
			b.Fatal(err)
		}
		ms := bb.fake.Messages()
		lat = append(lat, ms[len(ms)-1].At.Sub(start))
		b.StopTimer()
		time.Sleep(20 * time.Millisecond) // let the worker go idle again
		b.StartTimer()
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
