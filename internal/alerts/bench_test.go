package alerts

import (
	"strings"
	"testing"
)

// BenchmarkRenderWorst renders the largest alert Validate allows, which has
// to be shortened several times to fit the text limit.
func BenchmarkRenderWorst(b *testing.B) {
	labels := map[string]string{}
	for i := 0; i < MaxLabels; i++ {
		labels[strings.Repeat(string(rune('a'+i%26)), 1+i/26)] = strings.Repeat("&", 500)
	}
	a := Alert{Title: strings.Repeat("<", MaxTitleLen), Body: strings.Repeat("😀&", MaxBodyLen/2), Labels: labels, URL: "https://x.test/"}
	if err := a.Normalize(testNow); err != nil {
		b.Fatal(err)
	}
	r := newTestRouter(b, "routes:\n  - name: r\n    destinations: [1]\n", &recorder{})
	rt := r.Table().routes[0]
	for i := 0; i < b.N; i++ {
		r.render(&a, rt)
	}
}
