package jobs_test

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
)

// FuzzDecodePayload feeds arbitrary bytes to Decode, which workers run on
// whatever sits in Redis. Decode must not panic, and a payload it accepts
// must encode and decode again to the same message.
func FuzzDecodePayload(f *testing.F) {
	f.Fuzz(func(t *testing.T, payload []byte) {
		m, err := jobs.Decode(payload)
		if err != nil {
			return
		}
		if m.V != jobs.PayloadVersion {
			t.Fatalf("accepted payload version %d", m.V)
		}
		b, err := m.Encode()
		if err != nil {
			t.Fatalf("accepted %q but cannot encode it: %v", payload, err)
		}
		m2, err := jobs.Decode(b)
		if err != nil {
			t.Fatalf("re-encoded payload %s refused: %v", b, err)
		}
		if !m2.CreatedAt.Equal(m.CreatedAt) {
			t.Fatalf("created_at %v became %v", m.CreatedAt, m2.CreatedAt)
		}
		b2, err := m2.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, b2) {
			t.Fatalf("encoding is not stable:\n%s\n%s", b, b2)
		}
		m.CreatedAt, m2.CreatedAt = time.Time{}, time.Time{}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip changed the message:\n%+v\n%+v", m, m2)
		}
	})
}
