package yamlstrict

import (
	"fmt"
	"strings"
)

// maxSuggestDistance is the largest number of edits (Levenshtein distance)
// between a mistyped key and the key suggested for it: two catches a
// missing, doubled or swapped letter without suggesting unrelated words.
const maxSuggestDistance = 2

// Suggest returns the fix for an unknown key: "did you mean X?" when one of
// known is at most two edits away (ignoring case), else the list of known
// keys. Ties go to the key listed first.
func Suggest(got string, known []string) string {
	best, bestD := "", maxSuggestDistance+1
	lower := strings.ToLower(got)
	for _, k := range known {
		if d := editDistance(lower, strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		return fmt.Sprintf("did you mean %q?", best)
	}
	return "use one of " + strings.Join(known, ", ")
}

// editDistance is the Levenshtein distance between a and b, counted in
// bytes. Long strings are not compared: no key is that long, and the cost
// grows with the product of the lengths.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return len(a) + len(b)
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
