package broker

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// asynqShapes are strings that only code knowing asynq's private Redis
// layout or recognising its scripts would hold.
var asynqShapes = []string{
	"asynq:{",          // asynq's key prefix
	"}:g:",             // a group key
	"aggregation_sets", // the aggregation set index
	":paused",          // the dequeue script's second key
	"pending_since",    // a task hash field
	`"evalsha"`,        // recognising script calls in a hook
	"asynq.NewServer",  // the asynq server, which server.go builds
}

// TestAsynqLayoutStaysInBroker greps every non-test Go file of the module:
// asynq's key names and script shapes appear in this package only, so an
// asynq upgrade is checked (contract_test.go) and fixed in one place.
func TestAsynqLayoutStaysInBroker(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	self := filepath.Join(root, "internal", "broker")
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == self {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for _, shape := range asynqShapes {
			if strings.Contains(string(b), shape) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s holds %q: asynq's layout and scripts belong in internal/broker", rel, shape)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d Go files checked: the walk missed the module", checked)
	}
}
