package redisconn

import (
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/config"
)

func TestRedacted(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"redis://user:s3cret@cache:6379/1", "redis://user:xxxxx@cache:6379/1"},
		{"redis://:s3cret@cache:6379/1", "redis://:xxxxx@cache:6379/1"},
		{"rediss://s3cret@cache", "rediss://xxxxx@cache"},
		{"redis://user:s3c@ret@cache", "redis://user:xxxxx@cache"},
		{"redis://user:s3c/ret@cache", "redis://user:xxxxx@cache"},
		{"redis-sentinel://:s3cret@a:1,b:2/0?master=m&password=s3cret2", "redis-sentinel://:xxxxx@a:1,b:2/0?master=m&password=xxxxx"},
		{"redis-sentinel://a,b?Password=s3cret#frag", "redis-sentinel://a,b?Password=xxxxx#frag"},
		{"redis-socket://:s3cret@/run/r.sock?db=1", "redis-socket://:xxxxx@/run/r.sock?db=1"},
		{"s3cret@cache:6379", "xxxxx@cache:6379"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			r := Config{URL: tc.in}
			if got := r.Redacted(); got != tc.want {
				t.Errorf("Redacted() = %q, want %q", got, tc.want)
			}
			if got := r.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestErrorsNeverLeakPasswords feeds malformed URLs carrying a password
// through every path that can report them.
func TestErrorsNeverLeakPasswords(t *testing.T) {
	t.Parallel()
	const secret = "s3cretPW"
	urls := []string{
		"http://u:" + secret + "@cache:6379",
		"redis://u:" + secret + "@cache:bad/0",
		"redis://:" + secret + "@cache/x",
		"redis://:" + secret + " @cache/0",
		"redis://:pa/" + secret + "@cache/0",
		"redis://:" + secret + "@cache/0?password=" + secret,
		"redis-sentinel://:" + secret + "@s1,s2/0",
		"redis-sentinel://:" + secret + "@s1/0?master=m&password=" + secret + "&x=1",
		"redis-sentinel://:" + secret + "@[::1/0?master=m",
		"redis-socket://:" + secret + "@host/x.sock",
		"u:" + secret + "@cache:6379",
		"redis://u:" + secret + "@%zz/0",
	}
	for _, u := range urls {
		r := Config{URL: u}
		_, err1 := r.ConnOpt()
		_, err2 := r.UniversalOptions()
		var p config.Problems
		r.WithDefaults().Check(&p)
		_, err4 := r.NewClient(ClientOptions{})
		for i, err := range []error{err1, err2, p.Err(), err4} {
			if err == nil {
				t.Errorf("%d: %q was accepted", i, u)
				continue
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%d: error for a bad URL leaks the password: %v", i, err)
			}
		}
		if strings.Contains(r.Redacted(), secret) {
			t.Errorf("Redacted(%q) = %q leaks the password", u, r.Redacted())
		}
	}
}
