package ratelimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/test/redistest"
)

// fitScript runs the scripts' fit alone: KEYS[1] a log, ARGV[1] its
// windows ("n:span:g;..."), ARGV[2] the earliest time wanted (µs).
var fitScript = redis.NewScript(`
local guard = 0
` + luaCommon + `
return num(fit(KEYS[1], wins(ARGV[1]), tonumber(ARGV[2])))
`)

// window is one "n sends per need µs" constraint (need includes the guard).
type window struct{ n, need int64 }

// holds reports whether the sorted times keep every window: of any n+1
// consecutive entries, the first and the last are need or more apart.
func holds(times []int64, ws []window) bool {
	for _, w := range ws {
		for i := int(w.n); i < len(times); i++ {
			if times[i]-times[i-int(w.n)] < w.need {
				return false
			}
		}
	}
	return true
}

func with(times []int64, x int64) []int64 {
	out := append(slices.Clone(times), x)
	slices.Sort(out)
	return out
}

// TestFitFindsTheEarliestSlotThatKeepsEveryWindow checks fit against a
// brute force on random logs: the slot it returns keeps every window, and
// no earlier time at or after the one asked for does (after the log's last
// entry, when more entries than fit reads could bind). All times are whole
// milliseconds, so every place a fit can begin is on the grid searched.
// It runs on redis-server and on miniredis (the all-local mode's Redis).
func TestFitFindsTheEarliestSlotThatKeepsEveryWindow(t *testing.T) {
	t.Parallel()
	t.Run("redis-server", func(t *testing.T) {
		t.Parallel()
		checkFit(t, redistest.Start(t).Client(t))
	})
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		mr := miniredis.RunT(t)
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { _ = rdb.Close() })
		checkFit(t, rdb)
	})
}

func checkFit(t *testing.T, rdb redis.UniversalClient) {
	ctx := context.Background()
	shapes := [][]window{
		{{3, 100_000}, {1, 20_000}}, // like the bot: N per span, spread apart
		{{2, 50_000}},
		{{1, 30_000}, {4, 200_000}},
		{{5, 100_000}, {1, 7_000}, {2, 40_000}},
	}
	const ms = 1000
	holes := 0
	for round := 0; round < 300; round++ {
		r := rand.New(rand.NewPCG(uint64(round), 7))
		ws := shapes[round%len(shapes)]
		var arg []string
		for _, w := range ws {
			arg = append(arg, fmt.Sprintf("%d:%d:0", w.n, w.need))
		}
		// A valid log with holes: random times kept when they fit.
		base := int64(1_700_000_000_000_000)
		var log []int64
		for i := 0; i < 40; i++ {
			x := base + int64(r.IntN(600))*ms
			if holds(with(log, x), ws) {
				log = with(log, x)
			}
		}
		key := "fit:" + strconv.Itoa(round)
		for i, x := range log {
			if err := rdb.ZAdd(ctx, key, redis.Z{Score: float64(x), Member: i}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		from := base + int64(r.IntN(700)-50)*ms
		got, err := fitScript.Run(ctx, rdb, []string{key}, strings.Join(arg, ";"), from).Text()
		if err != nil {
			t.Fatal(err)
		}
		x, _ := strconv.ParseInt(got, 10, 64)
		if x < from || !holds(with(log, x), ws) {
			t.Fatalf("round %d: fit gave %d (asked from %d) for log %v, windows %v: it does not keep the windows", round, x-base, from-base, rel(log, base), ws)
		}
		// fit reads at most 4*maxn entries that can bind; with more, it
		// appends after the last entry.
		var maxn, reach int64
		for _, w := range ws {
			maxn, reach = max(maxn, w.n), max(reach, w.need)
		}
		binding := 0
		for _, e := range log {
			if e > from-reach {
				binding++
			}
		}
		lo := from
		if binding >= int(4*maxn) {
			lo = max(from, log[len(log)-1])
		}
		if len(log) > 0 && x < log[len(log)-1] {
			holes++
		}
		for y := lo; y < x; y += ms {
			if holds(with(log, y), ws) {
				t.Fatalf("round %d: fit gave %d, but %d (asked from %d) fits too; log %v, windows %v", round, x-base, y-base, from-base, rel(log, base), ws)
			}
		}
	}
	// The rounds must include slots found between reserved ones.
	if holes < 30 {
		t.Fatalf("only %d of 300 rounds found a slot before the log's end", holes)
	}
	t.Logf("%d of 300 rounds found a slot before the log's end", holes)
}

func rel(times []int64, base int64) []int64 {
	out := make([]int64, len(times))
	for i, x := range times {
		out[i] = x - base
	}
	return out
}
