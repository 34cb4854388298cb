package inbound

import (
	"strings"
	"testing"
)

// BenchmarkAccepted is the producer-side cost of one post of each format:
// authentication, decoding, rendering to plain text and fitting, with a
// dispatcher that stores nothing. The worker's send path does not run any
// of it.
func BenchmarkAccepted(b *testing.B) {
	for _, tc := range acceptedCases {
		b.Run(strings.ReplaceAll(tc.name, " ", "_"), func(b *testing.B) {
			p := tc.post
			if strings.HasSuffix(p.body, ".json") {
				p.body = fixture(b, p.body)
			}
			h := testHandler(b, &recorder{})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if w := p.do(h); w.Code != tc.status {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}
