package producer_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/producer"
)

// A client posts one alert with an idempotency key; the answer names the
// task and the queue it went to. Posting the same key again stores nothing
// new and says so.
func Example() {
	mr, err := miniredis.Run() // an in-memory Redis on 127.0.0.1
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{})
	defer enq.Close()

	// The token "api" may send; senders present it as a bearer token.
	keyring, err := httpapi.NewKeyring(httpapi.NewToken("api", "s3cret", httpapi.ScopeSend))
	if err != nil {
		log.Fatal(err)
	}
	api, err := producer.NewAPI(producer.Config{Enqueuer: enq, Redis: rdb, Keyring: keyring})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()

	for range 2 {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages",
			strings.NewReader(`{"chat":"-1001234567890","text":"<b>db-1</b>: disk 95% full","parse_mode":"HTML"}`))
		if err != nil {
			log.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer s3cret")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "db-1-disk-95")
		resp, err := srv.Client().Do(req)
		if err != nil {
			log.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s replayed=%q %s", resp.Status, resp.Header.Get("Idempotent-Replayed"), body)
	}
	// Output:
	// 202 Accepted replayed="" {"task_id":"idem-7a2058491f74dcc3eb8781182060fede","queue":"default","duplicate":false}
	// 202 Accepted replayed="true" {"task_id":"idem-7a2058491f74dcc3eb8781182060fede","queue":"default","duplicate":true}
}
