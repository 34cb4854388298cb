package feeds

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseConfig feeds arbitrary bytes to the feeds.yaml parser: it must
// never panic, every error must be a *configError, and an accepted file must
// pass Validate and resolve to usable feeds.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("feeds:\n  - name: a\n    url: https://a.test/\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := parseFile("", data)
		if err != nil {
			var ce *configError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v is not a *ConfigError", err, err)
			}
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if err := file.Validate(); err != nil {
			t.Fatalf("accepted file fails Validate: %v", err)
		}
		r := file.WithDefaults()
		if len(r.Feeds) == 0 {
			t.Fatal("accepted a file without feeds")
		}
		seen := map[string]bool{}
		for _, fd := range r.Feeds {
			if seen[fd.Name] {
				t.Fatalf("duplicate name %q accepted", fd.Name)
			}
			seen[fd.Name] = true
			if fd.Interval < minInterval || fd.Interval > maxInterval || fd.Timeout < minTimeout || fd.Timeout > maxTimeout {
				t.Fatalf("feed %q resolved to interval %v timeout %v", fd.Name, fd.Interval, fd.Timeout)
			}
			if checkURL(fd.URL) != "" {
				t.Fatalf("feed %q has a bad url %q", fd.Name, fd.URL)
			}
			if fd.Labels[labelFeed] != "" {
				t.Fatalf("feed %q sets the reserved label", fd.Name)
			}
		}
	})
}
