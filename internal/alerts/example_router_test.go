package alerts_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/jobs"
)

// A routing file with one route for the database team and a default route;
// one critical alert goes to the team's forum topic on the critical queue.
func ExampleRouter() {
	table, err := alerts.ParseRoutes("routes.yaml", []byte(`
routes:
  - name: db
    match:
      severity: [critical, warning]
      labels: {team: db}
    destinations:
      - chat: "-1001234567890"
        thread: 42
  - name: everything-else
    default: true
    destinations: ["@ops_alerts"]
`))
	if err != nil {
		fmt.Println(err)
		return
	}

	mr, err := miniredis.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	router, err := alerts.NewRouter(table, jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{}), alerts.RouterConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}

	res, err := router.Dispatch(context.Background(), []alerts.Alert{{
		Title:       "Replication lag > 30s",
		Body:        "db-2 is 42s behind db-1",
		Severity:    alerts.SeverityCritical,
		Source:      "alertmanager",
		URL:         "https://grafana.example.com/d/db",
		Labels:      map[string]string{"team": "db"},
		Fingerprint: "db-lag-2",
	}})
	if err != nil {
		fmt.Println(err)
		return
	}

	inspector := asynq.NewInspector(asynq.RedisClientOpt{Addr: mr.Addr()})
	defer inspector.Close()
	for _, m := range res.Messages {
		info, err := inspector.GetTaskInfo(m.Queue, m.TaskID)
		if err != nil {
			fmt.Println(err)
			return
		}
		msg, err := jobs.Decode(info.Payload)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("queue %s, chat %s, topic %d, %s, key %s\n%s\n", m.Queue, msg.Chat, msg.MessageThreadID, msg.ParseMode, msg.IdempotencyKey, msg.Text)
	}
	// Output:
	// queue critical, chat -1001234567890, topic 42, HTML, key db-lag-2/db/-1001234567890:42
	// 🚨 <b><a href="https://grafana.example.com/d/db">Replication lag &gt; 30s</a></b>
	//
	// db-2 is 42s behind db-1
	//
	// team=<code>db</code>
	// <i>via alertmanager</i>
}
