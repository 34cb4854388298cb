package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// stack runs docker and docker compose against the project.
type stack struct {
	dir   string
	files []string
}

func newStack(dir string, files []string) *stack { return &stack{dir: dir, files: files} }

// compose runs `docker compose -f ... args` in the project's directory.
func (s *stack) compose(ctx context.Context, args ...string) (string, error) {
	full := []string{"compose"}
	for _, f := range s.files {
		full = append(full, "-f", f)
	}
	cmd := exec.CommandContext(ctx, "docker", append(full, args...)...)
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("docker %s: %w: %s", strings.Join(append(full, args...), " "), err, out)
	}
	return string(out), nil
}

// container is the name compose gives a service's first container.
func container(service string) string { return "herald-" + service + "-1" }

// redisCLI runs redis-cli inside a service's container.
func (s *stack) redisCLI(ctx context.Context, service string, args ...string) (string, error) {
	full := append([]string{"exec", container(service), "redis-cli"}, args...)
	out, err := exec.CommandContext(ctx, "docker", full...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(full, " "), err, out)
	}
	return string(out), nil
}

// master returns the address the first answering sentinel names.
func (s *stack) master(ctx context.Context) (string, error) {
	var last error
	for _, sn := range sentinels {
		out, err := s.redisCLI(ctx, sn, "-p", "26379", "--raw", "sentinel", "get-master-addr-by-name", "herald")
		if err != nil {
			last = err
			continue
		}
		if f := strings.Fields(out); len(f) == 2 {
			return f[0], nil
		}
		last = fmt.Errorf("%s answered %q", sn, out)
	}
	return "", last
}

// replicaOf reports whether service is a replica of master with its link up.
func (s *stack) replicaOf(ctx context.Context, service, master string) bool {
	out, err := s.redisCLI(ctx, service, "info", "replication")
	if err != nil {
		return false
	}
	return strings.Contains(out, "role:slave") && strings.Contains(out, "master_host:"+master+"\r") &&
		strings.Contains(out, "master_link_status:up")
}

// startedAt is when the service's container last started.
func (s *stack) startedAt(ctx context.Context, service string) (time.Time, error) {
	out, err := exec.CommandContext(ctx, "docker", "inspect", "-f", "{{.State.StartedAt}}", container(service)).Output()
	if err != nil {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339Nano, strings.TrimSpace(string(out)))
}

// tilts counts the +tilt lines in the sentinels' logs.
func (s *stack) tilts() int {
	n := 0
	for _, sn := range sentinels {
		out, _ := exec.Command("docker", "logs", container(sn)).CombinedOutput()
		n += strings.Count(string(out), "+tilt")
	}
	return n
}
