package quota_test

import (
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/quota"
)

func TestReserveSettings(t *testing.T) {
	var c quota.ReserveConfig
	for _, s := range c.Specs() {
		v := map[string]string{quota.EnvReservePercent: "35", quota.EnvMemoryLimit: "512MiB"}[s.Env]
		if err := s.Set(v); err != nil {
			t.Fatalf("%s=%s: %v", s.Env, v, err)
		}
	}
	if c.Percent != 35 || c.MemoryLimit != 512<<20 {
		t.Fatalf("%+v", c)
	}
	if d := (quota.ReserveConfig{}).WithDefaults(); d.Percent != quota.DefaultReservePercent || d.MemoryLimit != 0 {
		t.Fatalf("defaults %+v", d)
	}
	var p config.Problems
	quota.ReserveConfig{Percent: 95, MemoryLimit: -1}.Check(&p)
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), quota.EnvReservePercent) || !strings.Contains(err.Error(), quota.EnvMemoryLimit) {
		t.Fatalf("problems: %v", err)
	}
}
