package deploy

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
	"github.com/herald-dev/herald/internal/worker"
)

func TestComposeServicesAndProfiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		profiles []string
		want     []string
		disabled []string
	}{
		{"default", nil, []string{svcProducer, svcProducerCheck, svcRedis, svcWorker, svcWorkerCheck}, []string{svcFeeds, svcPrometheus}},
		{"monitoring", []string{"monitoring"}, []string{svcProducer, svcProducerCheck, svcPrometheus, svcRedis, svcWorker, svcWorkerCheck}, []string{svcFeeds}},
		{"feeds", []string{"feeds"}, []string{svcFeeds, svcProducer, svcProducerCheck, svcRedis, svcWorker, svcWorkerCheck}, []string{svcPrometheus}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := loadProject(t, loadOpts{dotEnv: exampleEnv(t), profiles: tc.profiles})
			if got := p.ServiceNames(); !slices.Equal(got, tc.want) {
				t.Errorf("services = %v, want %v", got, tc.want)
			}
			if got := p.DisabledServiceNames(); !slices.Equal(got, tc.disabled) {
				t.Errorf("disabled services = %v, want %v", got, tc.disabled)
			}
		})
	}
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t), profiles: []string{"monitoring", "feeds"}})
	if got := service(t, p, svcPrometheus).Profiles; !slices.Equal(got, []string{"monitoring"}) {
		t.Errorf("prometheus profiles = %v, want [monitoring]", got)
	}
	if got := service(t, p, svcFeeds).Profiles; !slices.Equal(got, []string{"feeds"}) {
		t.Errorf("feeds profiles = %v, want [feeds]", got)
	}
	feeds := service(t, p, svcFeeds)
	if !slices.Equal(feeds.Command, types.ShellCommand{"feeds"}) {
		t.Errorf("feeds command = %v, want [feeds]", feeds.Command)
	}
	cfg, err := settings.LoadProducer(nil, envOf(feeds))
	if err != nil {
		t.Fatalf("feeds environment: %v", err)
	}
	if !strings.HasPrefix(cfg.Feeds.Path, "/etc/herald/") {
		t.Errorf("HERALD_FEEDS_FILE = %q, want a file under the mounted /etc/herald", cfg.Feeds.Path)
	}
	for _, name := range []string{svcProducer, svcFeeds} {
		mounted := false
		for _, v := range service(t, p, name).Volumes {
			mounted = mounted || (v.Target == "/etc/herald" && v.ReadOnly)
		}
		if !mounted {
			t.Errorf("%s does not mount ./deploy read-only at /etc/herald (routing and feed files)", name)
		}
	}
	for _, name := range []string{svcRedis, svcProducer, svcWorker, svcProducerCheck, svcWorkerCheck} {
		if got := service(t, p, name).Profiles; len(got) != 0 {
			t.Errorf("%s has profiles %v; it must start with a plain `docker compose up`", name, got)
		}
	}
}

// flagValue returns the argument after flag in a command line.
func flagValue(cmd []string, flag string) (string, bool) {
	i := slices.Index(cmd, flag)
	if i < 0 || i+1 >= len(cmd) {
		return "", false
	}
	return cmd[i+1], true
}

func TestRedisIsDurable(t *testing.T) {
	t.Parallel()
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t)})
	r := service(t, p, svcRedis)
	if !strings.HasPrefix(r.Image, "redis:7") {
		t.Errorf("redis image = %q, want redis:7-*", r.Image)
	}
	if len(r.Command) == 0 || r.Command[0] != "redis-server" {
		t.Fatalf("redis command = %q, want redis-server with flags", r.Command)
	}
	for flag, want := range map[string]string{
		"--appendonly":       "yes",
		"--appendfsync":      "everysec",
		"--maxmemory-policy": "noeviction",
	} {
		if got, ok := flagValue(r.Command, flag); !ok || got != want {
			t.Errorf("redis %s = %q (present %v), want %q", flag, got, ok, want)
		}
	}
	var data *types.ServiceVolumeConfig
	for i, v := range r.Volumes {
		if v.Target == "/data" {
			data = &r.Volumes[i]
		}
	}
	if data == nil {
		t.Fatalf("redis mounts nothing at /data (its AOF directory): %+v", r.Volumes)
	}
	if data.Type != types.VolumeTypeVolume {
		t.Errorf("/data is a %s mount, want a named volume", data.Type)
	}
	vol, ok := p.Volumes[data.Source]
	if !ok {
		t.Fatalf("/data uses volume %q, which is not declared at the top level", data.Source)
	}
	if vol.External {
		t.Errorf("volume %q is external; compose should create it", data.Source)
	}
	if data.ReadOnly {
		t.Error("/data is mounted read-only")
	}
}

func TestHealthchecks(t *testing.T) {
	t.Parallel()
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t), profiles: []string{"monitoring"}})
	for _, s := range p.Services {
		if oneShot(s.Name) {
			continue // runs to completion; compose waits for its exit code
		}
		hc := s.HealthCheck
		if hc == nil || hc.Disable || len(hc.Test) < 2 || hc.Test[0] == "NONE" {
			t.Errorf("%s: no health check (%+v)", s.Name, hc)
			continue
		}
		if hc.Interval == nil || hc.Timeout == nil || hc.Retries == nil {
			t.Errorf("%s: health check needs interval, timeout and retries: %+v", s.Name, hc)
		} else if *hc.Timeout > *hc.Interval {
			t.Errorf("%s: health check timeout %v exceeds its interval %v", s.Name, *hc.Timeout, *hc.Interval)
		}
	}
	want := map[string][]string{
		svcProducer: {"CMD", "/usr/local/bin/producer", "healthcheck"},
		svcWorker:   {"CMD", "/usr/local/bin/worker", "healthcheck"},
	}
	for name, argv := range want {
		if got := service(t, p, name).HealthCheck.Test; !slices.Equal(got, argv) {
			t.Errorf("%s health check = %q, want %q (exec form: the image has no shell)", name, got, argv)
		}
	}
	if got := strings.Join(service(t, p, svcRedis).HealthCheck.Test, " "); !strings.Contains(got, "redis-cli ping") {
		t.Errorf("redis health check = %q, want one based on redis-cli ping", got)
	}
}

func TestWorkerScales(t *testing.T) {
	t.Parallel()
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t)})
	w := service(t, p, svcWorker)
	switch {
	case w.Deploy == nil || w.Deploy.Replicas == nil:
		t.Error("worker sets no deploy.replicas, want 2")
	case *w.Deploy.Replicas != 2:
		t.Errorf("worker deploy.replicas = %d, want 2", *w.Deploy.Replicas)
	}
	if w.ContainerName != "" {
		t.Errorf("worker container_name = %q; a fixed name breaks --scale", w.ContainerName)
	}
	for _, port := range w.Ports {
		t.Errorf("worker declares port %d (published %q); replicas would collide on --scale, "+
			"and Prometheus reaches them without it", port.Target, port.Published)
	}
	if w.Build == nil || w.Build.Target != svcWorker {
		t.Errorf("worker build = %+v, want target %q", w.Build, svcWorker)
	}
}

func TestStartOrderWaitsForHealthyRedis(t *testing.T) {
	t.Parallel()
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t)})
	for _, name := range []string{svcProducer, svcWorker} {
		dep, ok := service(t, p, name).DependsOn[svcRedis]
		if !ok {
			t.Errorf("%s does not depend on redis", name)
			continue
		}
		if dep.Condition != types.ServiceConditionHealthy {
			t.Errorf("%s depends on redis with condition %q, want %q", name, dep.Condition, types.ServiceConditionHealthy)
		}
	}
}

func TestWorkerStopGraceExceedsShutdownTimeout(t *testing.T) {
	t.Parallel()
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t)})
	w := service(t, p, svcWorker)
	cfg, err := settings.LoadWorker(nil, envOf(w))
	if err != nil {
		t.Fatalf("the worker's compose environment is rejected by the config: %v", err)
	}
	if w.StopGracePeriod == nil {
		t.Fatalf("worker has no stop_grace_period; Docker's 10s default is below %s=%s",
			worker.EnvShutdownTimeout, cfg.Worker.ShutdownTimeout)
	}
	grace := time.Duration(*w.StopGracePeriod)
	if grace <= cfg.Worker.ShutdownTimeout {
		t.Errorf("worker stop_grace_period %s must exceed %s=%s, or Docker kills workers mid-send",
			grace, worker.EnvShutdownTimeout, cfg.Worker.ShutdownTimeout)
	}
	if s := w.StopSignal; s != "" && s != "SIGTERM" {
		t.Errorf("worker stop_signal = %q; the worker drains on SIGTERM", s)
	}
}

func TestRestartPolicies(t *testing.T) {
	t.Parallel()
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t), profiles: []string{"monitoring"}})
	ok := []string{types.RestartPolicyAlways, types.RestartPolicyUnlessStopped, types.RestartPolicyOnFailure}
	for _, s := range p.Services {
		if oneShot(s.Name) {
			if s.Restart != types.RestartPolicyNo {
				t.Errorf("%s restart = %q; an init check must run once (restart: \"no\")", s.Name, s.Restart)
			}
			continue
		}
		if !slices.Contains(ok, s.Restart) {
			t.Errorf("%s restart = %q, want one of %v", s.Name, s.Restart, ok)
		}
	}
}

func TestNetworks(t *testing.T) {
	t.Parallel()
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t), profiles: []string{"monitoring"}})
	internal := func(name string) bool { return p.Networks[name].Internal }
	onlyInternal := func(s types.ServiceConfig) bool {
		for n := range s.Networks {
			if !internal(n) {
				return false
			}
		}
		return len(s.Networks) > 0
	}
	shares := func(a, b types.ServiceConfig) bool {
		for n := range a.Networks {
			if _, ok := b.Networks[n]; ok {
				return true
			}
		}
		return false
	}
	redis := service(t, p, svcRedis)
	if !onlyInternal(redis) {
		t.Errorf("redis networks = %v; it must sit only on internal networks", keys(redis.Networks))
	}
	if len(redis.Ports) != 0 {
		t.Errorf("redis publishes %+v; it must not be reachable from the host", redis.Ports)
	}
	for _, name := range []string{svcProducer, svcWorker} {
		s := service(t, p, name)
		if !shares(s, redis) {
			t.Errorf("%s shares no network with redis", name)
		}
		if onlyInternal(s) {
			t.Errorf("%s is only on internal networks; it needs a way out (the published API, Telegram)", name)
		}
	}
	prom := service(t, p, svcPrometheus)
	for _, name := range []string{svcProducer, svcWorker} {
		if !shares(prom, service(t, p, name)) {
			t.Errorf("prometheus shares no network with %s, so it cannot scrape it", name)
		}
	}
	if shares(prom, redis) {
		t.Error("prometheus shares a network with redis; it has no business there")
	}
}

// keys returns a map's keys sorted, for messages.
func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestProducerPublishesItsListenPort(t *testing.T) {
	t.Parallel()
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t)})
	s := service(t, p, svcProducer)
	cfg, err := settings.LoadProducer(nil, envOf(s))
	if err != nil {
		t.Fatalf("the producer's compose environment is rejected by the config: %v", err)
	}
	port := listenPort(t, cfg.Server.Listen)
	published := false
	for _, pc := range s.Ports {
		if pc.Published != "" && strconv.Itoa(int(pc.Target)) == port {
			published = true
		}
	}
	if !published {
		t.Errorf("producer ports %+v do not publish container port %s (%s=%s)", s.Ports, port, producer.EnvListen, cfg.Server.Listen)
	}
	if s.Build == nil || s.Build.Target != svcProducer {
		t.Errorf("producer build = %+v, want target %q", s.Build, svcProducer)
	}
}

func TestRedisURLPointsAtRedisService(t *testing.T) {
	t.Parallel()
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t)})
	for _, name := range []string{svcProducer, svcWorker} {
		raw := envOf(service(t, p, name))(redisconn.EnvURL)
		if raw == "" {
			t.Errorf("%s has no %s; it would dial 127.0.0.1 inside its own container", name, redisconn.EnvURL)
			continue
		}
		if _, err := (redisconn.Config{URL: raw}).ConnOpt(); err != nil {
			t.Errorf("%s %s: %v", name, redisconn.EnvURL, err)
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Errorf("%s %s: %v", name, redisconn.EnvURL, err)
			continue
		}
		if u.Hostname() != svcRedis || u.Port() != "6379" {
			t.Errorf("%s %s = %s, want the redis service at redis:6379", name, redisconn.EnvURL, (redisconn.Config{URL: raw}).Redacted())
		}
	}
}
