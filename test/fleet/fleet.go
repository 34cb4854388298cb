package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/herald-dev/herald/internal/ratelimit"
	"github.com/herald-dev/herald/internal/worker"
)

// Telegram's documented limits for bots, in Telegram time: each private chat
// 1 message per second; each group, supergroup or channel 1 per second and
// 20 per minute; the whole bot 30 per second. They are the fleet's own
// model of Telegram, which the checks hold Herald's sends to, so they are
// written here rather than read from Herald's defaults. PriorityWindows is
// Herald's default allowance for priority messages.
var (
	PrivateWindows  = ratelimit.Limit{{N: 1, Per: time.Second}}
	GroupWindows    = ratelimit.Limit{{N: 1, Per: time.Second}, {N: 20, Per: time.Minute}}
	BotWindows      = ratelimit.Limit{{N: 30, Per: time.Second}}
	PriorityWindows = ratelimit.DefaultPriority
	// PaidWindows is the bot-wide limit of paid broadcasts (Bot API 7.11:
	// "up to 1000 messages per second").
	PaidWindows = ratelimit.Limit{{N: 1000, Per: time.Second}}
)

// Limits are Herald's limits at a time scale. The windows are in Telegram
// time; a time scale compresses their span, not their count: at Scale 10
// "30 per second" becomes "30 per 100ms", for Herald and the fake alike.
// The worker's guard (HERALD_LIMIT_GUARD, 10ms of real time) is not scaled
// and must stay below the shortest span: past scale 60 set a smaller one in
// Fleet.ExtraEnv.
type Limits struct {
	Scale                         float64
	Bot, Private, Group, Priority ratelimit.Limit
	// PauseBotMax caps the whole bot's pause after a 429 (Telegram time,
	// HERALD_PAUSE_BOT_MAX); zero leaves the worker's default. The worker
	// reads retry_after as real seconds, so at a time scale it waits longer
	// than the fake asks; scaling the cap keeps a capped pause as long, in
	// Telegram time, as at scale 1.
	PauseBotMax time.Duration
	// Paid, when set, turns the bot's paid broadcasts on at this bot-wide
	// limit (HERALD_PAID_BROADCAST, HERALD_PAID_LIMIT; Telegram time), and
	// Telegram's own bot-wide limit for the fleet becomes PaidWindows.
	Paid ratelimit.Limit
}

// botWindows is Telegram's bot-wide limit for the fleet's bot: PaidWindows
// with paid broadcasts, BotWindows without.
func (l Limits) botWindows() ratelimit.Limit {
	if len(l.Paid) > 0 {
		return PaidWindows
	}
	return BotWindows
}

// DefaultPauseBotMax is Herald's default cap on a bot-wide pause.
const DefaultPauseBotMax = ratelimit.DefaultBotPauseMax

// DefaultLimits are Telegram's documented limits (and Herald's priority
// default and pause cap) at scale.
func DefaultLimits(scale float64) Limits {
	return Limits{Scale: scale, Bot: slices.Clone(BotWindows), Private: slices.Clone(PrivateWindows),
		Group: slices.Clone(GroupWindows), Priority: slices.Clone(PriorityWindows), PauseBotMax: DefaultPauseBotMax}
}

// scale returns the time scale, 1 when unset.
func (l Limits) scale() float64 {
	if l.Scale <= 0 {
		return 1
	}
	return l.Scale
}

// Real converts a Telegram duration into real time at l's scale.
func (l Limits) Real(d time.Duration) time.Duration {
	return time.Duration(math.Round(float64(d) / l.scale()))
}

// Setting formats windows as a HERALD_LIMIT_* value at l's scale, e.g.
// "1/100ms,20/6s": each span in real time, rounded to the microsecond
// ("333.333ms"), which is far inside the fake's tolerance.
func (l Limits) Setting(ws ratelimit.Limit) string {
	scaled := make(ratelimit.Limit, len(ws))
	for i, w := range ws {
		scaled[i] = ratelimit.Window{N: w.N, Per: l.Real(w.Per).Round(time.Microsecond)}
	}
	return scaled.String()
}

// WorkerEnv returns the worker's limit settings at l's scale; an empty list
// of windows or a zero PauseBotMax is left to the worker's default.
func (l Limits) WorkerEnv() []string {
	var env []string
	for _, s := range []struct {
		name string
		ws   ratelimit.Limit
	}{
		{"HERALD_LIMIT_BOT", l.Bot}, {"HERALD_LIMIT_PRIVATE", l.Private},
		{"HERALD_LIMIT_GROUP", l.Group}, {"HERALD_LIMIT_PRIORITY", l.Priority},
	} {
		if len(s.ws) > 0 {
			env = append(env, s.name+"="+l.Setting(s.ws))
		}
	}
	if len(l.Paid) > 0 {
		env = append(env, worker.EnvPaidBroadcast+"=true", worker.EnvPaidLimit+"="+l.Setting(l.Paid))
	}
	if l.PauseBotMax > 0 {
		env = append(env, "HERALD_PAUSE_BOT_MAX="+l.Real(l.PauseBotMax).Round(time.Microsecond).String())
	}
	if l.scale() > 1 {
		// The fake counts retry_after in its own, shorter seconds.
		env = append(env, "TELEGRAM_RETRY_AFTER_UNIT="+l.Real(time.Second).Round(time.Microsecond).String())
	}
	return env
}

// Fleet is a producer and workers around one Redis.
type Fleet struct {
	Dir      string
	Bins     Binaries
	RedisURL string
	APIURL   string // fake Bot API base URL
	Token    string
	// Bots, when set, are the bots the fleet serves (name to token): the
	// producer and the workers get HERALD_BOTS, each worker every bot's
	// token (the bot "default" by TELEGRAM_BOT_TOKEN). Token is then unused.
	Bots     map[string]string
	Limits   Limits
	ExtraEnv []string // added to every worker
	// ProducerEnv is added to the producer started by StartProducer.
	ProducerEnv []string
	// Updates lets the workers read the bots' updates (button presses)
	// with getUpdates, as they do by default. Off, the fake sees only the
	// requests that deliver messages, which is what the scenarios count.
	Updates bool
	// WorkerNice, when above 0, starts each worker at that niceness
	// (nice(1)), below the process running the fake Bot API. On a machine
	// where the fleet and the fake share two cores, a fake that waits for
	// a core stamps requests tens of milliseconds after they were sent (a
	// stall of 38 ms, seen at the start of a burst, moved six requests
	// together), where Telegram, on its own machines, would count them as
	// they came; a worker that waits is Herald's own concern, which its
	// send-by checks answer. Benchmarks leave it 0.
	WorkerNice int
	Producer   *Proc
	APIBase    string // producer's http://host:port
	APIToken   string
	// AdminToken is the producers' HERALD_ADMIN_TOKEN: every scope, for
	// what a sender's token may not do (silences).
	AdminToken string
	mu         sync.Mutex
	Workers    []*Proc
	nextIndex  int
}

// FreeAddr returns a free loopback host:port.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func (f *Fleet) commonEnv() []string {
	env := []string{"REDIS_URL=" + f.RedisURL, "LOG_FORMAT=json", "LOG_LEVEL=info", "HERALD_QUEUES=critical=12,default=6,low=2,broadcast=1"}
	if len(f.Bots) > 0 {
		env = append(env, "HERALD_BOTS="+strings.Join(f.BotNames(), ","))
	}
	return env
}

// BotNames lists Bots' names, sorted.
func (f *Fleet) BotNames() []string {
	names := make([]string, 0, len(f.Bots))
	for n := range f.Bots {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// tokenEnv is the worker's bot token settings.
func (f *Fleet) tokenEnv() []string {
	if len(f.Bots) == 0 {
		return []string{"TELEGRAM_BOT_TOKEN=" + f.Token}
	}
	var env []string
	for _, n := range f.BotNames() {
		if n == "default" {
			env = append(env, "TELEGRAM_BOT_TOKEN="+f.Bots[n])
			continue
		}
		env = append(env, "HERALD_BOT_"+strings.ToUpper(strings.ReplaceAll(n, "-", "_"))+"_TOKEN="+f.Bots[n])
	}
	return env
}

// producerEnv is a producer's listen address and tokens: APIToken for
// senders, AdminToken for operators (set to defaults on first use).
func (f *Fleet) producerEnv(addr string) []string {
	if f.APIToken == "" {
		f.APIToken = "bench-api-token-0" // 16 characters at least, as a tokens file wants
	}
	if f.AdminToken == "" {
		f.AdminToken = "bench-admin-token"
	}
	return []string{"HERALD_LISTEN=" + addr, "HERALD_ADMIN_TOKEN=" + f.AdminToken, "HERALD_TOKENS_FILE=" + f.tokensFile()}
}

// tokensFile writes a tokens file in Dir naming APIToken "api", with the
// send scope, the paid permission when the fleet's bot has paid broadcasts
// (only such a token spends Stars), and no quota on what it queues: a
// scenario posts tens of thousands of messages before the drain, beyond
// the defaults a small team never meets (docs/QUOTAS.md). It returns the
// file's path.
func (f *Fleet) tokensFile() string {
	dir := filepath.Join(f.Dir, "tokens")
	_ = os.MkdirAll(dir, 0o700)
	_ = os.WriteFile(filepath.Join(dir, "api-token"), []byte(f.APIToken+"\n"), 0o600)
	entry := "tokens:\n  - name: api\n    scopes: [send]\n    file: api-token\n" +
		"    quotas: {queued_messages: -1, queued_recipients: -1, broadcasts_per_hour: -1, alerts_per_minute: -1}\n"
	if len(f.Limits.Paid) > 0 {
		entry += "    paid: true\n"
	}
	path := filepath.Join(dir, "tokens.yaml")
	_ = os.WriteFile(path, []byte(entry), 0o600)
	return path
}

// StartProducer starts the producer API and waits until it is ready.
func (f *Fleet) StartProducer(ctx context.Context) error {
	addr, err := FreeAddr()
	if err != nil {
		return err
	}
	env := append(f.commonEnv(), f.producerEnv(addr)...)
	env = append(env, f.ProducerEnv...)
	p, err := Start("producer", f.Bins.Producer, nil, env, filepath.Join(f.Dir, "producer.log"))
	if err != nil {
		return err
	}
	f.Producer, f.APIBase = p, "http://"+addr
	return p.WaitReady(ctx, f.APIBase+"/readyz")
}

// StartWorker starts one more worker process and waits until it is ready.
func (f *Fleet) StartWorker(ctx context.Context, extra ...string) (*Proc, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.nextIndex++
	name := fmt.Sprintf("worker-%d", f.nextIndex)
	f.mu.Unlock()
	env := append(f.commonEnv(),
		"HERALD_WORKER_LISTEN="+addr,
		"TELEGRAM_API_URL="+f.APIURL,
		"HERALD_SHUTDOWN_TIMEOUT=10s",
	)
	env = append(env, f.tokenEnv()...)
	if !f.Updates {
		env = append(env, "HERALD_TELEGRAM_UPDATES=false")
	}
	env = append(env, f.Limits.WorkerEnv()...)
	env = append(env, f.ExtraEnv...)
	env = append(env, extra...)
	p, err := startNice(f.WorkerNice, name, f.Bins.Worker, nil, env, filepath.Join(f.Dir, name+".log"))
	if err != nil {
		return nil, err
	}
	if err := p.WaitReady(ctx, "http://"+addr+"/readyz"); err != nil {
		p.Kill()
		return nil, err
	}
	f.mu.Lock()
	f.Workers = append(f.Workers, p)
	f.mu.Unlock()
	return p, nil
}

// StopWorker sends SIGTERM to w and waits for a clean exit.
func (f *Fleet) StopWorker(ctx context.Context, w *Proc) error {
	if err := w.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	return w.Wait(ctx)
}

// PauseWorkers stops every running worker with SIGSTOP (see Proc.Pause).
func (f *Fleet) PauseWorkers() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.Workers {
		if w.exited() {
			continue
		}
		if err := w.Pause(); err != nil {
			return fmt.Errorf("pausing %s: %w", w.Name, err)
		}
	}
	return nil
}

// ResumeWorkers continues every running worker with SIGCONT.
func (f *Fleet) ResumeWorkers() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for _, w := range f.Workers {
		if w.exited() {
			continue
		}
		if err := w.Resume(); err != nil {
			errs = append(errs, fmt.Errorf("resuming %s: %w", w.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Close stops every process with SIGTERM, waiting up to 15 seconds each,
// then SIGKILL. Paused processes are resumed first so they can exit.
func (f *Fleet) Close() {
	f.mu.Lock()
	procs := append([]*Proc{}, f.Workers...)
	f.mu.Unlock()
	if f.Producer != nil {
		procs = append(procs, f.Producer)
	}
	for _, p := range procs {
		_ = p.Resume()
		_ = p.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		if p.Wait(ctx) == context.DeadlineExceeded {
			p.Kill()
		}
		cancel()
	}
}

// Logs returns every process's log concatenated (for leak checks).
func (f *Fleet) Logs() string {
	var sb strings.Builder
	entries, _ := os.ReadDir(f.Dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".log") {
			b, _ := os.ReadFile(filepath.Join(f.Dir, e.Name()))
			sb.Write(b)
		}
	}
	return sb.String()
}
