// Command failover measures docker-compose.replicated.yml's failover on a
// running stack: it POSTs a message every -interval to the producer's
// published port, kills the Redis master -kills times in a row, and for
// each kill prints how long the API and the deliveries took to come back,
// whether a sentinel logged +tilt, and how long the killed node, brought
// back with `docker compose up -d`, took to replicate from the new master.
// Deliveries are read from the fake Bot API's /fake/messages. Loopback
// and the engine's own networks only.
//
//	go build -o /tmp/failover ./test/deploy/failover
//	/tmp/failover -dir ../herald-offline -fake http://127.0.0.1:PORT
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"
)

// nodes maps the fixed addresses of the compose file to their services.
var nodes = map[string]string{
	"10.231.42.11": "redis",
	"10.231.42.12": "redis-replica-1",
	"10.231.42.13": "redis-replica-2",
}

var sentinels = []string{"sentinel-1", "sentinel-2", "sentinel-3"}

type options struct {
	dir, api, fake, tokenFile string
	files                     []string
	kills                     int
	interval, settle, drain   time.Duration
	late                      time.Duration
}

func main() {
	var o options
	var files string
	flag.StringVar(&o.dir, "dir", ".", "the compose project's directory")
	flag.StringVar(&files, "files", "docker-compose.yml,docker-compose.replicated.yml", "compose files, comma-separated")
	flag.StringVar(&o.api, "api", "http://127.0.0.1:8080", "the producer's published address")
	flag.StringVar(&o.fake, "fake", "", "the fake Bot API's address on the host (required)")
	flag.StringVar(&o.tokenFile, "token-file", "secrets/herald_api_token", "the API token, relative to -dir")
	flag.IntVar(&o.kills, "kills", 5, "master kills in a row")
	flag.DurationVar(&o.interval, "interval", 100*time.Millisecond, "time between two POSTs")
	flag.DurationVar(&o.settle, "settle", 5*time.Second, "quiet time before each kill")
	flag.DurationVar(&o.drain, "drain", 30*time.Second, "time given to the last deliveries")
	flag.DurationVar(&o.late, "late", 120*time.Second, "after the drain, how long more to wait for accepted messages still missing")
	flag.Parse()
	o.files = strings.Split(files, ",")
	if o.fake == "" {
		fmt.Fprintln(os.Stderr, "failover: -fake is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "failover:", err)
		os.Exit(1)
	}
}

// run starts the traffic, kills the master o.kills times and prints a line
// per kill and a summary.
func run(ctx context.Context, o options) error {
	token, err := os.ReadFile(o.dir + "/" + o.tokenFile)
	if err != nil {
		return err
	}
	st := newStack(o.dir, o.files)
	tr := newTraffic(o.api, strings.TrimSpace(string(token)), o.fake)
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pctx, stopPosting := context.WithCancel(tctx)
	defer stopPosting()
	go tr.post(pctx, o.interval)
	go tr.watch(tctx, 50*time.Millisecond)
	tilts := st.tilts()
	for i := 1; i <= o.kills; i++ {
		if err := sleep(ctx, o.settle); err != nil {
			return err
		}
		k, err := killOnce(ctx, st, tr, tilts)
		if err != nil {
			return fmt.Errorf("kill %d: %w", i, err)
		}
		tilts = k.tiltsAfter
		fmt.Println(k.line(i))
	}
	if err := sleep(ctx, o.drain); err != nil {
		return err
	}
	stopPosting()
	fmt.Println(tr.summary())
	for _, l := range tr.odd() {
		fmt.Println("  " + l)
	}
	if tr.lost() > 0 {
		fmt.Println(tr.waitLate(ctx, o.late))
		for _, l := range tr.odd() {
			fmt.Println("  " + l)
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
