package settings_test

import (
	"fmt"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/settings"
)

func ExampleParseWindows() {
	ws, err := settings.ParseWindows("1/s,20/m")
	if err != nil {
		panic(err)
	}
	fmt.Println(ws, len(ws), ws[1].N, ws[1].Per)
	half, _ := settings.ParseWindows("0.5/s")
	fmt.Println(half)
	_, err = settings.ParseWindows("2.5/s")
	fmt.Println(err)
	// Output:
	// 1/s,20/m 2 20 1m0s
	// 1/2s
	// config: limit "2.5/s" has the fractional send count 2.5; write whole sends per span, e.g. "5/2s"
}

func ExampleLoadWorker() {
	env := map[string]string{
		"HERALD_CONCURRENCY": "8",
		"HERALD_LIMIT_BOT":   "25/s",
	}
	// The flag wins over the environment.
	w, err := settings.LoadWorker([]string{"-concurrency", "16"}, func(k string) string { return env[k] })
	if err != nil {
		panic(err)
	}
	fmt.Println(w.Concurrency, w.Limits.Bot, w.Limits.Group, w.Limits.Guard)
	// Output: 16 25/s 1/s,20/m 20ms
}

func ExampleLoadProducerArgs() {
	env := map[string]string{"HERALD_API_TOKEN": "change-me"}
	p, rest, err := settings.LoadProducerArgs(
		[]string{"-default-queue", "critical", "send", "--chat", "1", "disk full"},
		func(k string) string { return env[k] })
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Enqueue.DefaultQueue, rest)
	// Output: critical [send --chat 1 disk full]
}

func ExampleWorker_Validate() {
	w := settings.Worker{}.WithDefaults()
	w.Concurrency = 0
	w.BackoffBase = time.Hour
	fmt.Println(w.Validate())
	// Output:
	// HERALD_CONCURRENCY (-concurrency) must be >= 1, got 0
	// HERALD_BACKOFF_BASE (-backoff-base) is 1h, above HERALD_BACKOFF_CAP (-backoff-cap) which is 10m; lower the base or raise the cap
}

func ExampleRedis_Redacted() {
	r := settings.Redis{URL: "redis-sentinel://:hunter2@10.0.0.1:26379,10.0.0.2:26379/0?master=mymaster"}
	fmt.Println(r.Redacted())
	// Output: redis-sentinel://:xxxxx@10.0.0.1:26379,10.0.0.2:26379/0?master=mymaster
}

func ExampleMarkdownTable() {
	fmt.Print(config.MarkdownTable(settings.WorkerSettings()[11:12]))
	// Output:
	// | Environment | Flag | Default | Description |
	// |---|---|---|---|
	// | `HERALD_CONCURRENCY` | `-concurrency` | `64` | Number of tasks processed at the same time. |
}
