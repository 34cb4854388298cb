package deploy

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/test/redistest"
)

// redisHAScript starts every node of the replicated layer.
const redisHAScript = "deploy/redis-ha.sh"

// runRedisHA runs deploy/redis-ha.sh with env under sh, with a
// docker-entrypoint.sh on PATH that prints its arguments one per line
// instead of starting Redis, and returns those arguments.
func runRedisHA(t *testing.T, env map[string]string, args ...string) []string {
	t.Helper()
	return runRedisHAWith(t, "", nil, env, args...)
}

// runRedisHAWith is runRedisHA with more commands on PATH: stubs maps a
// command's name to its shell script. With applets (a directory of
// busybox's applets, see busyboxApplets), the script runs under busybox
// with nothing else on PATH, as in the Alpine image the compose file names.
func runRedisHAWith(t *testing.T, applets string, stubs map[string]string, env map[string]string, args ...string) []string {
	t.Helper()
	bin := t.TempDir()
	all := map[string]string{"docker-entrypoint.sh": "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n"}
	for name, script := range stubs {
		all[name] = script
	}
	for name, script := range all {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shell, path := "sh", bin+":"+os.Getenv("PATH")
	if applets != "" {
		shell, path = filepath.Join(applets, "sh"), bin+":"+applets
	}
	cmd := exec.Command(shell, append([]string{filepath.Join(repoRoot(t), redisHAScript)}, args...)...)
	cmd.Env = []string{"PATH=" + path, "MASTER_NAME=herald"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", redisHAScript, args, err, stderr.String())
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// replicaOf returns what --replicaof names in a redis-server command line,
// or "" when it has none.
func replicaOf(argv []string) string {
	for i, a := range argv {
		if a == "--replicaof" && i+2 < len(argv) {
			return argv[i+1] + ":" + argv[i+2]
		}
	}
	return ""
}

// TestRedisHAFollowsTheSentinels: a data node started by redis-ha.sh is a
// replica of the master the sentinels name now (after a failover too), the
// master itself when they name it, and a replica of FIRST_MASTER when no
// sentinel answers; it always announces its own address.
func TestRedisHAFollowsTheSentinels(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli is not installed")
	}
	g := redistest.StartSentinelGroup(t, redistest.SentinelOptions{})
	var sentinels []string
	for _, s := range g.Sentinels {
		sentinels = append(sentinels, s.Addr)
	}
	env := map[string]string{"NODE_IP": "127.0.0.1", "NODE_PORT": "1", "FIRST_MASTER": "127.0.0.9",
		"SENTINELS": strings.Join(sentinels, " ")}
	argv := runRedisHA(t, env, "data", "--appendonly", "yes")
	if argv[0] != "redis-server" || replicaOf(argv) != g.Master.Addr || !strings.Contains(strings.Join(argv, " "), "--appendonly yes") ||
		argv[len(argv)-2] != "--replica-announce-ip" || argv[len(argv)-1] != "127.0.0.1" {
		t.Errorf("with the sentinels naming %s: %q", g.Master.Addr, argv)
	}
	_, port, _ := net.SplitHostPort(g.Master.Addr)
	env["NODE_PORT"] = port
	if argv := runRedisHA(t, env, "data"); replicaOf(argv) != "" {
		t.Errorf("the node the sentinels name as master starts as a replica: %q", argv)
	}

	old := g.Master.Addr
	g.Master.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	now, err := g.WaitNewMaster(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	if argv := runRedisHA(t, env, "data"); replicaOf(argv) != now {
		t.Errorf("the old master %s, restarted after the failover to %s: %q", old, now, argv)
	}

	closed, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	env["SENTINELS"] = "127.0.0.1:" + strconv.Itoa(closed)
	if argv := runRedisHA(t, env, "data"); replicaOf(argv) != "127.0.0.9:6379" {
		t.Errorf("no sentinel answering: %q, want a replica of FIRST_MASTER", argv)
	}
}

// TestRedisHATakesTheNewestFailover: right after a failover only its
// leader names the new master (config epoch 1) while two sentinels still
// name the old one (epoch 0); the old master, restarted then, must start as
// a replica of the new master, not as a second master because most
// sentinels still name it. While the leader reconfigures the replicas, its
// SENTINEL MASTER already shows epoch 1 next to the old master's ip, and
// only GET-MASTER-ADDR-BY-NAME names the new one (Redis's
// sentinelGetCurrentMasterAddress); CI started the old master as a master
// in that window. The sentinels here are a redis-cli on PATH that answers
// as each of them would at that moment. The script runs under the host's
// sh and, where installed, under busybox alone (the Alpine image's shell
// and tools).
func TestRedisHATakesTheNewestFailover(t *testing.T) {
	t.Parallel()
	// LEADER is the leader's state: "reconf" while it reconfigures the
	// replicas, "done" once it switched to the promoted replica, "moving"
	// when the failover's new epoch lands between the script's two
	// questions (its first SENTINEL MASTER still shows epoch 0).
	cli := `#!/bin/sh
port=; cmd=; while [ $# -gt 0 ]; do
	case $1 in -p) port=$2 ;; MASTER|GET-MASTER-ADDR-BY-NAME) cmd=$1 ;; esac; shift
done
case $port in
7001|7002) ip=127.0.0.21 addr=127.0.0.21 epoch=0 ;;
7003) ip=127.0.0.22 addr=127.0.0.22 epoch=1; [ "$LEADER" = reconf ] && ip=127.0.0.21
	if [ "$LEADER" = moving ] && [ "$cmd" = MASTER ] && [ ! -e "$STATE/asked" ]; then
		: >"$STATE/asked"; ip=127.0.0.21 epoch=0
	fi ;;
*) echo "Could not connect" >&2; exit 1 ;;
esac
case $cmd in
MASTER) printf 'name\nherald\nip\n%s\nport\n6379\nrunid\nx\nflags\nmaster\nconfig-epoch\n%s\nnum-slaves\n1\n' "$ip" "$epoch" ;;
*) printf '%s\n6379\n' "$addr" ;;
esac
`
	shells := map[string]string{"sh": ""}
	if dir := busyboxApplets(t); dir != "" {
		shells["busybox"] = dir
	}
	for name, applets := range shells {
		for _, leader := range []string{"reconf", "done", "moving"} {
			env := map[string]string{"NODE_IP": "127.0.0.21", "NODE_PORT": "6379", "FIRST_MASTER": "127.0.0.21",
				"SENTINELS": "127.0.0.1:7001 127.0.0.1:7002 127.0.0.1:7003", "LEADER": leader, "STATE": t.TempDir()}
			stubs := map[string]string{"redis-cli": cli}
			if argv := runRedisHAWith(t, applets, stubs, env, "data"); replicaOf(argv) != "127.0.0.22:6379" {
				t.Errorf("%s, leader %s: the old master, two sentinels naming it at epoch 0 and the leader naming 127.0.0.22 at epoch 1: %q", name, leader, argv)
			}
			env["NODE_IP"] = "127.0.0.22"
			if argv := runRedisHAWith(t, applets, stubs, env, "data"); replicaOf(argv) != "" {
				t.Errorf("%s, leader %s: the new master restarted: %q, want no --replicaof", name, leader, argv)
			}
		}
	}
}

// busyboxApplets returns a directory holding, as links to busybox, the
// commands redis-ha.sh runs, or "" when busybox is not installed (.ci/run
// installs it).
func busyboxApplets(t *testing.T) string {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		return ""
	}
	dir := t.TempDir()
	for _, a := range []string{"sh", "awk", "sort", "grep", "uniq", "timeout", "mktemp", "cat", "rm", "id", "printf", "echo"} {
		if err := os.Symlink(bb, filepath.Join(dir, a)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRedisHASentinelConfig: a sentinel started by redis-ha.sh monitors
// the master the other sentinels name, by address, resolves no host name
// and announces its own address.
func TestRedisHASentinelConfig(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli is not installed")
	}
	g := redistest.StartSentinelGroup(t, redistest.SentinelOptions{})
	conf := filepath.Join(t.TempDir(), "sentinel.conf")
	host, port, _ := net.SplitHostPort(g.Master.Addr)
	argv := runRedisHA(t, map[string]string{
		"NODE_IP": "127.0.0.1", "NODE_PORT": "1", "FIRST_MASTER": "127.0.0.9", "SENTINEL_CONF": conf,
		"SENTINELS": g.Sentinels[0].Addr + " " + g.Sentinels[1].Addr,
		"QUORUM":    "2", "DOWN_AFTER_MS": "2000", "FAILOVER_TIMEOUT_MS": "10000",
	}, "sentinel")
	if strings.Join(argv, " ") != "redis-server "+conf+" --sentinel" {
		t.Errorf("sentinel command line %q", argv)
	}
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"sentinel resolve-hostnames no", "sentinel announce-hostnames no", "sentinel announce-ip 127.0.0.1",
		"sentinel monitor herald " + host + " " + port + " 2",
		"sentinel down-after-milliseconds herald 2000", "sentinel failover-timeout herald 10000",
	} {
		if !strings.Contains(string(b), line+"\n") {
			t.Errorf("%s lacks %q:\n%s", conf, line, b)
		}
	}
}
