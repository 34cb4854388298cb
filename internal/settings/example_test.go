package settings_test

import (
	"fmt"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/settings"
)

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
	fmt.Println(w.Worker.Concurrency, w.Worker.Limits.Bot, w.Worker.Limits.Group, w.Worker.Limits.Guard)
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
	w.Worker.Concurrency = 0
	w.Worker.BackoffBase = time.Hour
	fmt.Println(w.Validate())
	// Output:
	// HERALD_CONCURRENCY (-concurrency) must be >= 1, got 0
	// HERALD_BACKOFF_BASE (-backoff-base) is 1h, above HERALD_BACKOFF_CAP (-backoff-cap) which is 10m; lower the base or raise the cap
}

func ExampleMarkdownTable() {
	fmt.Print(config.MarkdownTable(settings.WorkerSettings()[11:12]))
	// Output:
	// | Environment | Flag | Default | Description |
	// |---|---|---|---|
	// | `HERALD_CONCURRENCY` | `-concurrency` | `64` | Number of tasks processed at the same time. |
}
