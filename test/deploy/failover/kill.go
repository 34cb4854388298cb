package main

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// kill is what one master kill did.
type kill struct {
	killed, from, to   string // the service killed, its address, the new master's
	at                 time.Time
	refused            int           // requests sent after the kill without a 202
	api                time.Duration // kill -> the first 202 after the last refusal
	slowest            time.Duration // the longest 202 of the window
	delivering         time.Duration // kill -> a message sent after it reached the fake
	tilts, tiltsAfter  int
	upTook, rejoinTook time.Duration // `up -d` itself; its start -> replica of the new master
	fromStart          time.Duration // the container's start -> replica of the new master
	rejoined           bool
}

// killOnce kills the master, waits until a message sent after the kill is
// delivered, then brings the killed node back and waits for it to
// replicate from the new master.
func killOnce(ctx context.Context, st *stack, tr *traffic, tiltsBefore int) (kill, error) {
	from, err := st.master(ctx)
	if err != nil {
		return kill{}, err
	}
	k := kill{from: from, killed: nodes[from]}
	if k.killed == "" {
		return k, fmt.Errorf("the sentinels name %s, which is no data node", from)
	}
	k.at = time.Now()
	// docker kill, not compose kill: the CLI starts faster, so the
	// clock starts closer to the kill.
	if out, err := exec.CommandContext(ctx, "docker", "kill", container(k.killed)).CombinedOutput(); err != nil {
		return k, fmt.Errorf("docker kill: %w: %s", err, out)
	}
	// Recovered: the sentinels name another master, and a message sent
	// after that was delivered.
	deadline := k.at.Add(90 * time.Second)
	var switched time.Time
	for switched.IsZero() || !tr.deliveredSince(switched) {
		if time.Now().After(deadline) {
			return k, fmt.Errorf("no new master, or nothing sent after it delivered, within 90 s")
		}
		if switched.IsZero() {
			if m, err := st.master(ctx); err == nil && m != from {
				switched = time.Now()
			}
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return k, err
		}
	}
	restored := time.Now()
	if k.to, err = st.master(ctx); err != nil {
		return k, err
	}
	k.tiltsAfter = st.tilts()
	k.tilts = k.tiltsAfter - tiltsBefore
	if err := sleep(ctx, 2*time.Second); err != nil {
		return k, err
	}
	err = rejoin(ctx, st, &k)
	// Read the window after the rejoin, so that requests still open at
	// the restore have their answer.
	k.refused, k.api, k.slowest, k.delivering = tr.window(k.at, restored)
	return k, err
}

// rejoin runs `docker compose up -d` for the killed service and waits up
// to 30 s for it to be a replica of the new master with its link up.
func rejoin(ctx context.Context, st *stack, k *kill) error {
	start := time.Now()
	if _, err := st.compose(ctx, "up", "-d", k.killed); err != nil {
		return err
	}
	k.upTook = time.Since(start)
	for time.Since(start) < 30*time.Second {
		if st.replicaOf(ctx, k.killed, k.to) {
			k.rejoined, k.rejoinTook = true, time.Since(start)
			if started, err := st.startedAt(ctx, k.killed); err == nil {
				k.fromStart = time.Since(started)
			}
			return nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

func (k kill) line(i int) string {
	rejoin := "not a replica of the new master within 30 s"
	if k.rejoined {
		rejoin = fmt.Sprintf("replica of %s (link up) %.1f s after `up -d` began, %.1f s after its container started (up -d took %.1f s)",
			k.to, k.rejoinTook.Seconds(), k.fromStart.Seconds(), k.upTook.Seconds())
	}
	return fmt.Sprintf("kill %d: %s (%s) -> %s: 202 again %.1f s, delivering again %.1f s, %d refused, slowest 202 %.1f s, +tilt %d; %s: %s",
		i, k.killed, k.from, k.to, k.api.Seconds(), k.delivering.Seconds(), k.refused, k.slowest.Seconds(), k.tilts, k.killed, rejoin)
}

// deliveredSince reports whether a message posted after t reached the fake.
func (t *traffic) deliveredSince(at time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.reqs) - 1; i >= 0 && !t.reqs[i].sent.Before(at); i-- {
		if t.reqs[i].deliveries > 0 {
			return true
		}
	}
	return false
}

// window reads the requests sent from at to until: how many got no 202,
// when the first 202 after the last of those came, the slowest 202, and
// when the first message accepted after the last refusal reached the fake.
func (t *traffic) window(at, until time.Time) (refused int, api, slowest, delivering time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var lastRefused time.Time
	first := time.Duration(-1)
	for _, r := range t.reqs {
		if r.sent.Before(at) || r.sent.After(until) {
			continue
		}
		if !r.answered {
			refused++
			continue
		}
		if r.code != 202 {
			refused++
			if r.sent.After(lastRefused) {
				lastRefused = r.sent
			}
			continue
		}
		slowest = max(slowest, r.done.Sub(r.sent))
	}
	for _, r := range t.reqs {
		if !r.answered || r.code != 202 || !r.sent.After(lastRefused) || r.sent.Before(at) {
			continue
		}
		if api == 0 {
			api = r.done.Sub(at)
		}
		if r.deliveries > 0 && (first < 0 || r.seen.Sub(at) < first) {
			first = r.seen.Sub(at)
		}
	}
	return refused, api, slowest, first
}

// summary counts, over the whole run, the accepted messages never
// delivered, the messages delivered more than once, and the refused ones
// that were delivered all the same.
func (t *traffic) summary() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var accepted, lost, dups, refusedDelivered, unanswered int
	for _, r := range t.reqs {
		switch {
		case !r.answered:
			unanswered++
		case r.code == 202:
			accepted++
			if r.deliveries == 0 {
				lost++
			}
		case r.deliveries > 0:
			refusedDelivered++
		}
		if r.deliveries > 1 {
			dups++
		}
	}
	return fmt.Sprintf("total: %d posted, %d accepted (202), %d refused, %d unanswered at the end; lost %d, duplicates %d, refused but delivered %d; other texts at the fake %d",
		len(t.reqs), accepted, len(t.reqs)-accepted-unanswered, unanswered, lost, dups, refusedDelivered, t.extra)
}
