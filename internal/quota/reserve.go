package quota

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/jobs"
)

// Settings of the reserve.
const (
	EnvReservePercent = "HERALD_REDIS_RESERVE_PERCENT"
	EnvMemoryLimit    = "HERALD_REDIS_MEMORY_LIMIT"
)

// DefaultReservePercent is the share of Redis' memory kept for what pages
// people.
const DefaultReservePercent = 20

// ReserveSample is how often the reserve reads Redis' memory (INFO
// memory): once per interval per producer, never per request.
const ReserveSample = time.Second

// ReserveConfig says how much of Redis' memory bulk work may use.
type ReserveConfig struct {
	// Percent of the memory limit kept for alerts, heartbeats and the
	// critical and default queues: bulk work (broadcasts, audiences, the
	// low and broadcast queues) is refused once Redis uses more than the
	// rest. 0 turns the reserve off.
	Percent int
	// MemoryLimit is the limit to measure against when Redis has no
	// maxmemory (0: Redis' maxmemory; with neither, no reserve).
	MemoryLimit int64
}

// WithDefaults fills in the zero fields.
func (c ReserveConfig) WithDefaults() ReserveConfig {
	if c.Percent == 0 {
		c.Percent = DefaultReservePercent
	}
	return c
}

// Specs binds the settings.
func (c *ReserveConfig) Specs() []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvReservePercent, strconv.Itoa(DefaultReservePercent),
			"Share of Redis' memory (percent of maxmemory) kept for alerts, heartbeats and the critical and default queues: above the rest, broadcasts, audiences and the low and broadcast queues get a 503 (docs/CAPACITY.md); -1 turns it off.",
			config.IntVar(&c.Percent)),
		config.NewSpec(EnvMemoryLimit, "0",
			"Redis' memory to measure the reserve against when its maxmemory is 0 (unlimited); 0 uses maxmemory.",
			config.BytesVar(&c.MemoryLimit)),
	}
}

// Check adds the settings' problems to p.
func (c ReserveConfig) Check(p *config.Problems) {
	if c.Percent != -1 && (c.Percent < 1 || c.Percent > 90) {
		p.Add(EnvReservePercent, "must be between 1 and 90, or -1 for no reserve; got %d", c.Percent)
	}
	if c.MemoryLimit < 0 {
		p.Add(EnvMemoryLimit, "must be a size such as 512MiB, or 0")
	}
}

// What bulk messages cost in Redis (docs/CAPACITY.md, measured with
// TestReserveKeepsRoomForAlerts): a queued message takes MessageBytes plus
// its text; once a worker has deferred it to its turn (a reservation, an
// entry in its queue's turn log and in asynq's retry set) DeferBytes more,
// until it is sent. The reserve counts both for the bulk messages
// accepted, so that the backlog the workers have not reached yet cannot
// grow Redis past the line later.
const (
	MessageBytes = 800
	DeferBytes   = 512
)

// bulkQueues are the queues of bulk work whose pending messages are still
// to be deferred.
var bulkQueues = []string{jobs.QueueLow, jobs.QueueBroadcast}

// Reserve watches Redis' memory and tells whether bulk work may still be
// stored. It samples INFO memory and the bulk queues' pending counts every
// ReserveSample (Run); a request reads the last sample, plus what this
// process admitted since (Fits).
type Reserve struct {
	rdb      redis.UniversalClient
	cfg      ReserveConfig
	log      *slog.Logger
	last     atomic.Pointer[memory]
	admitted atomic.Int64 // bytes Fits let in since the last sample
}

// memory is one sample: used_memory, the limit it is measured against, and
// the bulk messages pending (not deferred yet).
type memory struct{ used, limit, backlog int64 }

// expected is the memory the sample stands for once its backlog is
// deferred, plus what was admitted since.
func (r *Reserve) expected(m *memory) int64 {
	return m.used + m.backlog*DeferBytes
}

// NewReserve returns the reserve of rdb; cfg must have its defaults.
func NewReserve(rdb redis.UniversalClient, cfg ReserveConfig, log *slog.Logger) *Reserve {
	return &Reserve{rdb: rdb, cfg: cfg, log: log}
}

// Run samples until ctx is done.
func (r *Reserve) Run(ctx context.Context) {
	t := time.NewTicker(ReserveSample)
	defer t.Stop()
	for {
		if err := r.Sample(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("could not read Redis' memory for the reserve; keeping the last reading", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sample reads Redis' memory once.
func (r *Reserve) Sample(ctx context.Context) error {
	// What is admitted from here on may not show in this reading.
	before := r.admitted.Load()
	info := r.rdb.Info(ctx, "memory")
	pending := make([]*redis.IntCmd, len(bulkQueues))
	for i, q := range bulkQueues {
		// Each queue's key has its own hash slot: one call each.
		pending[i] = r.rdb.LLen(ctx, broker.PendingKey(q))
	}
	if err := info.Err(); err != nil {
		return fmt.Errorf("INFO memory: %w", err)
	}
	m := memory{used: infoField(info.Val(), "used_memory"), limit: infoField(info.Val(), "maxmemory")}
	for _, c := range pending {
		if err := c.Err(); err != nil {
			return fmt.Errorf("LLEN of a bulk queue: %w", err)
		}
		m.backlog += c.Val()
	}
	if m.limit == 0 {
		m.limit = r.cfg.MemoryLimit
	}
	r.last.Store(&m)
	r.admitted.Add(-before)
	return nil
}

// infoField reads a whole-number field of an INFO answer (0 when absent).
func infoField(info, name string) int64 {
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// ReserveError refuses bulk work: Redis uses, or with the bulk messages
// accepted and this request would use, more than its share.
type ReserveError struct {
	// Used is Redis' memory with the accepted backlog deferred; Asked what
	// the refused request would add (0 when it was not counted).
	Used, Asked, Limit int64
	Percent            int
}

func (e *ReserveError) Error() string {
	asked := ""
	if e.Asked > 0 {
		asked = fmt.Sprintf(" and this request would add about %d", e.Asked)
	}
	return fmt.Sprintf("Redis uses %d of %d bytes of memory (%.0f%%) with the bulk messages queued%s; the last %d%% is kept for alerts, heartbeats and the critical and default queues (%s), "+
		"so broadcasts, audiences and the low and broadcast queues are refused until messages drain; retry later",
		e.Used, e.Limit, 100*float64(e.Used)/float64(e.Limit), asked, e.Percent, EnvReservePercent)
}

// Bulk returns a *ReserveError when bulk work must be refused: the last
// sample shows Redis using more than its limit less the reserve. Nil when
// the reserve is off, no limit is known, or nothing was sampled yet.
func (r *Reserve) Bulk() error {
	return r.fits(0, false)
}

// Fits is Bulk for a request that stores n bulk messages of textBytes
// each: nil, and the messages counted until the next sample, when they
// fit under the line with what Redis holds and the bulk messages accepted
// before them will take.
func (r *Reserve) Fits(n, textBytes int) error {
	return r.fits(int64(n)*(MessageBytes+DeferBytes+int64(textBytes)), true)
}

func (r *Reserve) fits(asked int64, admit bool) error {
	if r == nil || r.cfg.Percent <= 0 {
		return nil
	}
	m := r.last.Load()
	if m == nil || m.limit <= 0 {
		return nil
	}
	// Checked and counted in one step (compare and swap), so that
	// concurrent requests never take the same room.
	for {
		admitted := r.admitted.Load()
		if used := r.expected(m) + admitted; (used+asked)*100 > m.limit*int64(100-r.cfg.Percent) {
			return &ReserveError{Used: used, Asked: asked, Limit: m.limit, Percent: r.cfg.Percent}
		}
		if !admit || r.admitted.CompareAndSwap(admitted, admitted+asked) {
			return nil
		}
	}
}

// Start samples in the background until ctx is done or stop is called;
// stop returns once sampling ended.
func (r *Reserve) Start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	return func() { cancel(); <-done }
}
