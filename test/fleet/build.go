package fleet

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Binaries are the paths of built commands.
type Binaries struct {
	Producer string
	Worker   string
}

// moduleRoot finds the repository root from this source file's location.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Build compiles cmd/producer and cmd/worker into dir.
func Build(ctx context.Context, dir string) (Binaries, error) {
	b := Binaries{Producer: filepath.Join(dir, "producer"), Worker: filepath.Join(dir, "worker")}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir, "./cmd/producer", "./cmd/worker")
	cmd.Dir = moduleRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return b, fmt.Errorf("go build: %v\n%s", err, out)
	}
	return b, nil
}
