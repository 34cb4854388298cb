package fleet

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Limits are Telegram's limits at a time scale: at Scale 10 every rate is ten
// times higher, for Herald and the fake alike.
type Limits struct {
	Scale float64
	// Herald's bursts; the fake tolerates one message more per limit (and a
	// fuller bot-wide bucket), as Telegram does.
	BotBurst, PrivateBurst, GroupBurst int
}

// DefaultLimits are Herald's defaults at scale 1.
func DefaultLimits(scale float64) Limits {
	return Limits{Scale: scale, BotBurst: 10, PrivateBurst: 1, GroupBurst: 1}
}

func (l Limits) rate(n float64, unit string) string {
	return strconv.FormatFloat(n*l.Scale, 'f', -1, 64) + "/" + unit
}

// WorkerEnv returns the worker's limit settings.
func (l Limits) WorkerEnv() []string {
	return []string{
		"HERALD_LIMIT_BOT=" + l.rate(30, "s"), "HERALD_BURST_BOT=" + strconv.Itoa(l.BotBurst),
		"HERALD_LIMIT_PRIVATE=" + l.rate(1, "s"), "HERALD_BURST_PRIVATE=" + strconv.Itoa(l.PrivateBurst),
		"HERALD_LIMIT_GROUP=" + l.rate(20, "m"), "HERALD_BURST_GROUP=" + strconv.Itoa(l.GroupBurst),
		"HERALD_LIMIT_PRIORITY=" + l.rate(3, "s"),
	}
}

// Fleet is a producer and workers around one Redis.
type Fleet struct {
	Dir      string
	Bins     Binaries
	RedisURL string
	APIURL   string // fake Bot API base URL
	Token    string
	Limits   Limits
	ExtraEnv []string // added to every worker
	// ProducerEnv is added to the producer started by StartProducer.
	ProducerEnv []string
	Producer    *Proc
	APIBase     string // producer's http://host:port
	APIToken    string
	mu          sync.Mutex
	Workers     []*Proc
	nextIndex   int
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
	return []string{"REDIS_URL=" + f.RedisURL, "LOG_FORMAT=json", "LOG_LEVEL=info", "HERALD_QUEUES=critical=6,default=3,low=1"}
}

// StartProducer starts the producer API and waits until it is ready.
func (f *Fleet) StartProducer(ctx context.Context) error {
	addr, err := FreeAddr()
	if err != nil {
		return err
	}
	f.APIToken = "bench-api-token"
	env := append(f.commonEnv(), "HERALD_LISTEN="+addr, "HERALD_API_TOKEN="+f.APIToken)
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
		"TELEGRAM_BOT_TOKEN="+f.Token,
		"TELEGRAM_API_URL="+f.APIURL,
		"HERALD_SHUTDOWN_TIMEOUT=10s",
	)
	env = append(env, f.Limits.WorkerEnv()...)
	env = append(env, f.ExtraEnv...)
	env = append(env, extra...)
	p, err := Start(name, f.Bins.Worker, nil, env, filepath.Join(f.Dir, name+".log"))
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

// Close stops every process with SIGTERM, waiting up to 15 seconds each,
// then SIGKILL.
func (f *Fleet) Close() {
	f.mu.Lock()
	procs := append([]*Proc{}, f.Workers...)
	f.mu.Unlock()
	if f.Producer != nil {
		procs = append(procs, f.Producer)
	}
	for _, p := range procs {
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
