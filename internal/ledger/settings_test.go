package ledger_test

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/ledger"
)

func TestRetentionSetting(t *testing.T) {
	t.Parallel()
	var c ledger.Config
	if _, err := config.Load("t", c.Specs(), nil, func(k string) string {
		return map[string]string{ledger.EnvRetention: "72h"}[k]
	}); err != nil {
		t.Fatal(err)
	}
	if c.Retention != 72*time.Hour {
		t.Fatalf("retention = %v, want 72h", c.Retention)
	}
	if got := (ledger.Config{}).WithDefaults().Retention; got != ledger.DefaultRetention {
		t.Fatalf("default retention = %v", got)
	}
	var p config.Problems
	ledger.Config{Retention: 30 * time.Minute}.Check(&p)
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), ledger.EnvRetention) || !strings.Contains(err.Error(), "at least 1h") {
		t.Fatalf("a 30m retention: %v; want a problem naming %s and the floor", err, ledger.EnvRetention)
	}
}
