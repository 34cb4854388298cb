package deploy

import (
	"context"
	"net"
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

// netInternal is the base file's network without a route out.
const netInternal = "internal"

// redisHAMount is where the replicated layer mounts deploy/redis-ha.sh.
const redisHAMount = "/etc/herald/redis-ha.sh"

// The replicated layer's Redis data nodes and sentinels.
var (
	dataNodes    = []string{svcRedis, "redis-replica-1", "redis-replica-2"}
	sentinelSvcs = []string{"sentinel-1", "sentinel-2", "sentinel-3"}
)

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
// sentinels and waits for a replica; every data node refuses writes
// without a replica (min-replicas-to-write) and keeps its AOF; every node
// and sentinel starts through deploy/redis-ha.sh, which picks the master
// (TestRedisHAFollowsTheSentinels).
func TestReplicatedRedisLayer(t *testing.T) {
	t.Parallel()
	p := loadReplicated(t)
	sentinels := sentinelSvcs
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
	for _, name := range dataNodes {
		cmd := service(t, p, name).Command
		if len(cmd) < 3 || cmd[0] != "sh" || cmd[1] != redisHAMount || cmd[2] != "data" {
			t.Errorf("%s command %q does not start with sh %s data", name, cmd, redisHAMount)
		}
		for flag, want := range map[string]string{
			"--min-replicas-to-write": "1", "--min-replicas-max-lag": "10", "--appendonly": "yes",
			"--repl-diskless-sync-delay": "0",
		} {
			if i := slices.Index(cmd, flag); i < 0 || i+1 >= len(cmd) || cmd[i+1] != want {
				t.Errorf("%s command %q: %s should be %s", name, cmd, flag, want)
			}
		}
		// redis-ha.sh adds these from what the sentinels say.
		for _, flag := range []string{"--replicaof", "--slaveof", "--replica-announce-ip"} {
			if slices.Contains(cmd, flag) {
				t.Errorf("%s command %q sets %s; redis-ha.sh sets it from the sentinels' answer", name, cmd, flag)
			}
		}
	}
	for _, sn := range sentinels {
		if cmd := service(t, p, sn).Command; !slices.Equal(cmd, []string{"sh", redisHAMount, "sentinel"}) {
			t.Errorf("%s command %q, want sh %s sentinel", sn, cmd, redisHAMount)
		}
	}
}

// TestReplicatedFixedAddresses: a failover resolves no host name. The
// internal network has a fixed subnet; every Redis data node and sentinel
// has a fixed address in it, outside the pool (ip_range) of the containers
// without one, and sits on internal networks only; what redis-ha.sh reads
// (NODE_IP, FIRST_MASTER, SENTINELS) and every Herald service's REDIS_URL
// name those addresses, never a host name (issue 40: lookups of the killed
// master's name sent the sentinels into TILT).
func TestReplicatedFixedAddresses(t *testing.T) {
	t.Parallel()
	p := loadReplicated(t)
	subnet, pool := internalSubnet(t, p)
	addr := map[string]string{} // service -> its fixed address
	seen := map[string]string{}
	for _, name := range append(slices.Clone(dataNodes), sentinelSvcs...) {
		s := service(t, p, name)
		for n := range s.Networks {
			if !p.Networks[n].Internal {
				t.Errorf("%s is on %s, a network with a route out; the Redis group needs none", name, n)
			}
		}
		if len(s.Ports) != 0 {
			t.Errorf("%s publishes %+v; the Redis group must not be reachable from the host", name, s.Ports)
		}
		nc := s.Networks[netInternal]
		var ip net.IP
		if nc != nil {
			ip = net.ParseIP(nc.Ipv4Address)
		}
		switch {
		case ip == nil || !subnet.Contains(ip):
			t.Errorf("%s has no fixed ipv4_address in %s on %s", name, subnet, netInternal)
			continue
		case pool.Contains(ip):
			t.Errorf("%s address %s lies in ip_range %s, where Docker hands out addresses to other containers", name, ip, pool)
		case seen[ip.String()] != "":
			t.Errorf("%s and %s share %s", name, seen[ip.String()], ip)
		}
		seen[ip.String()], addr[name] = name, ip.String()
		env := rawEnv(s)
		if got := env("NODE_IP"); got != ip.String() {
			t.Errorf("%s NODE_IP = %q, want its address %s", name, got, ip)
		}
		if got := env("FIRST_MASTER"); got != addr[svcRedis] {
			t.Errorf("%s FIRST_MASTER = %q, want redis's address %s", name, got, addr[svcRedis])
		}
		if !slices.ContainsFunc(s.Volumes, func(v types.ServiceVolumeConfig) bool {
			return v.Type == types.VolumeTypeBind && v.Source == filepath.Join(p.WorkingDir, redisHAScript) && v.Target == redisHAMount && v.ReadOnly
		}) {
			t.Errorf("%s does not mount %s read-only at %s: %+v", name, redisHAScript, redisHAMount, s.Volumes)
		}
	}
	var want []string
	for _, sn := range sentinelSvcs {
		want = append(want, addr[sn]+":26379")
	}
	for _, name := range append(slices.Clone(dataNodes), sentinelSvcs...) {
		if got := strings.Fields(rawEnv(service(t, p, name))("SENTINELS")); !slices.Equal(got, want) {
			t.Errorf("%s SENTINELS = %q, want the sentinels' addresses %q", name, got, want)
		}
	}
	wantURL := "redis-sentinel://" + strings.Join(want, ",") + "/0?master=herald"
	for _, name := range []string{svcProducer, svcProducerCheck, svcWorker, svcWorkerCheck, svcFeeds} {
		if got := rawEnv(service(t, p, name))(redisconn.EnvURL); got != wantURL {
			t.Errorf("%s %s = %q, want %q (the sentinels by address)", name, redisconn.EnvURL, got, wantURL)
		}
	}
}

// internalSubnet returns the subnet the replicated layer gives the
// internal network and the ip_range inside it.
func internalSubnet(t *testing.T, p *types.Project) (subnet, pool *net.IPNet) {
	t.Helper()
	n := p.Networks[netInternal]
	if !n.Internal || n.Ipam.Config == nil || len(n.Ipam.Config) != 1 {
		t.Fatalf("network %s: internal %v, ipam %+v; want internal with one fixed subnet", netInternal, n.Internal, n.Ipam)
	}
	c := n.Ipam.Config[0]
	_, subnet, err := net.ParseCIDR(c.Subnet)
	if err != nil {
		t.Fatalf("network %s subnet %q: %v", netInternal, c.Subnet, err)
	}
	_, pool, err = net.ParseCIDR(c.IPRange)
	if err != nil || !subnet.Contains(pool.IP) {
		t.Fatalf("network %s ip_range %q: %v; want a range inside %s for the containers without a fixed address", netInternal, c.IPRange, err, subnet)
	}
	return subnet, pool
}
