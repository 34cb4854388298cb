package markup

import (
	"math/rand"
	"sort"
	"testing"
)

func TestHist(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	m := map[string]int{}
	ex := map[string]string{}
	for i := 0; i < 3000; i++ {
		s := genDoc(r, MarkdownV2)
		if err := Validate(s, MarkdownV2); err != nil {
			pe := err.(*ParseError)
			m[pe.Msg]++
			if len(s) < 300 {
				ex[pe.Msg] = s
			}
		}
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		t.Logf("%d %s %q", m[k], k, ex[k])
	}
}
