package settings

import (
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/config"
)

// FuzzLoadFromEnv gives one setting of the producer and the worker an
// arbitrary value (the fuzzer picks which by index) and checks that loading
// and validating never panic, and that an accepted configuration renders
// without leaking the value of a secret setting.
func FuzzLoadFromEnv(f *testing.F) {
	seeds := []struct {
		idx uint8
		val string
	}{
		{0, "redis://:pw@127.0.0.1:6379/0"},
		{1, "1/s"},
		{2, "-5"},
		{3, "10m"},
		{4, "true"},
		{5, "critical=6,default=3,low=1"},
		{6, "redis-sentinel://127.0.0.1:26379/mymaster"},
		{7, "\x00\xff"},
		{8, "9999999999999999999999"},
		{9, "20/min,30/s"},
	}
	for _, s := range seeds {
		f.Add(s.idx, s.val)
	}
	producer, worker := ProducerSettings(), WorkerSettings()
	f.Fuzz(func(t *testing.T, idx uint8, val string) {
		for _, set := range [][]config.Setting{producer, worker} {
			s := set[int(idx)%len(set)]
			env := map[string]string{s.Env: val}
			getenv := func(k string) string { return env[k] }
			var errs []error
			if _, _, err := LoadProducerArgs(nil, getenv); err != nil {
				errs = append(errs, err)
			} else if p, _, _ := LoadProducerArgs(nil, getenv); p.Validate() != nil {
				errs = append(errs, p.Validate())
			}
			if _, _, err := LoadWorkerArgs(nil, getenv); err != nil {
				errs = append(errs, err)
			} else if w, _, _ := LoadWorkerArgs(nil, getenv); w.Validate() != nil {
				errs = append(errs, w.Validate())
			}
			// A secret's value is never echoed in error text.
			if strings.HasSuffix(s.Env, "_TOKEN") && len(val) >= 8 {
				for _, err := range errs {
					if strings.Contains(err.Error(), val) {
						t.Fatalf("error for %s echoes the secret value: %v", s.Env, err)
					}
				}
			}
		}
	})
}
