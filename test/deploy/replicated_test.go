package deploy

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/herald-dev/herald/internal/redisconn"
)

// replicatedFile layers a Sentinel group under the base compose file.
const replicatedFile = "docker-compose.replicated.yml"

// loadReplicated loads the base file with the replicated layer on top, as
// `docker compose -f docker-compose.yml -f docker-compose.replicated.yml`
// does, from a scratch copy of the project.
func loadReplicated(t *testing.T) *types.Project {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range map[string]string{
		composeFile: readRepoFile(t, composeFile), replicatedFile: readRepoFile(t, replicatedFile),
		".env": exampleEnv(t), prometheusFile: readRepoFile(t, prometheusFile),
	} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	opts, err := cli.NewProjectOptions([]string{filepath.Join(dir, composeFile), filepath.Join(dir, replicatedFile)},
		cli.WithWorkingDirectory(dir), cli.WithEnvFiles(filepath.Join(dir, ".env")), cli.WithDotEnv,
		cli.WithProfiles([]string{"feeds"}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("compose-go cannot load %s over %s: %v", replicatedFile, composeFile, err)
	}
	return p
}

// TestReplicatedRedisLayer: every Herald service reaches Redis through the
// three sentinels and waits for a replica; every data node refuses writes
// without a replica (min-replicas-to-write) and keeps its AOF; the
// sentinels monitor the base file's redis service under the name the URL
// asks for.
func TestReplicatedRedisLayer(t *testing.T) {
	t.Parallel()
	p := loadReplicated(t)
	sentinels := []string{"sentinel-1", "sentinel-2", "sentinel-3"}
	for _, name := range []string{svcProducer, svcProducerCheck, svcWorker, svcWorkerCheck, svcFeeds} {
		s := service(t, p, name)
		env := rawEnv(s)
		raw := env(redisconn.EnvURL)
		if _, err := (redisconn.Config{URL: raw}).ConnOpt(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !strings.HasPrefix(raw, "redis-sentinel://") || !strings.HasSuffix(raw, "?master=herald") {
			t.Errorf("%s %s = %q, want the sentinels and master=herald", name, redisconn.EnvURL, raw)
		}
		for _, sn := range sentinels {
			if !strings.Contains(raw, sn+":26379") {
				t.Errorf("%s %s lacks %s", name, redisconn.EnvURL, sn)
			}
		}
		if got := env(redisconn.EnvWaitReplicas); got != "1" {
			t.Errorf("%s %s = %q, want 1", name, redisconn.EnvWaitReplicas, got)
		}
		if oneShot(name) {
			continue
		}
		for _, sn := range sentinels {
			if dep, ok := s.DependsOn[sn]; !ok || dep.Condition != types.ServiceConditionHealthy {
				t.Errorf("%s does not wait for %s to be healthy", name, sn)
			}
		}
	}
	for _, name := range []string{svcRedis, "redis-replica-1", "redis-replica-2"} {
		cmd := service(t, p, name).Command
		for flag, want := range map[string]string{
			"--min-replicas-to-write": "1", "--min-replicas-max-lag": "10", "--appendonly": "yes",
			"--replica-announce-ip": name,
		} {
			if i := slices.Index(cmd, flag); i < 0 || i+1 >= len(cmd) || cmd[i+1] != want {
				t.Errorf("%s command %q: %s should be %s", name, cmd, flag, want)
			}
		}
		if name != svcRedis {
			if i := slices.Index(cmd, "--replicaof"); i < 0 || i+2 >= len(cmd) || cmd[i+1] != svcRedis || cmd[i+2] != "6379" {
				t.Errorf("%s command %q does not replicate redis:6379", name, cmd)
			}
		}
	}
	for _, sn := range sentinels {
		script := strings.Join(service(t, p, sn).Command, " ")
		for _, line := range []string{"sentinel resolve-hostnames yes", "sentinel monitor herald redis 6379 2", "--sentinel"} {
			if !strings.Contains(script, line) {
				t.Errorf("%s command lacks %q: %s", sn, line, script)
			}
		}
	}
}

// TestReplicatedNetworks: every data node and sentinel of the replicated
// layer is on a network that is not internal, beside the base file's
// internal one. On Docker 20.10 the embedded DNS of an internal-only
// network answers a name it does not know (the killed master's) after
// about 20 s, and the failover aborts (issue 31). That routed network is
// theirs alone: no port is published on it, and no Herald service or
// Prometheus joins it; the Herald services still reach the sentinels.
func TestReplicatedNetworks(t *testing.T) {
	t.Parallel()
	p := loadReplicated(t)
	nodes := []string{svcRedis, "redis-replica-1", "redis-replica-2", "sentinel-1", "sentinel-2", "sentinel-3"}
	routed := map[string]bool{} // the nodes' networks that are not internal
	for _, name := range nodes {
		s := service(t, p, name)
		var own []string
		for n := range s.Networks {
			if !p.Networks[n].Internal {
				own = append(own, n)
				routed[n] = true
			}
		}
		if len(own) == 0 {
			t.Errorf("%s networks = %v: only internal ones; on Docker 20.10 its lookups of a vanished name take 20 s and a failover aborts", name, keys(s.Networks))
		}
		if len(s.Ports) != 0 {
			t.Errorf("%s publishes %+v; the Redis group must not be reachable from the host", name, s.Ports)
		}
	}
	for _, name := range nodes[1:] {
		a, b := service(t, p, svcRedis), service(t, p, name)
		shared := false
		for n := range a.Networks {
			if _, ok := b.Networks[n]; ok && !p.Networks[n].Internal {
				shared = true
			}
		}
		if !shared {
			t.Errorf("%s shares no routed network with redis", name)
		}
	}
	for _, name := range []string{svcProducer, svcWorker, svcFeeds} {
		s := service(t, p, name)
		for n := range s.Networks {
			if routed[n] {
				t.Errorf("%s is on %s, the Redis group's routed network; it reaches the sentinels on internal", name, n)
			}
		}
		reach := false
		for n := range s.Networks {
			if _, ok := service(t, p, "sentinel-1").Networks[n]; ok {
				reach = true
			}
		}
		if !reach {
			t.Errorf("%s shares no network with the sentinels", name)
		}
	}
}
