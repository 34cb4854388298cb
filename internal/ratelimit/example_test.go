package ratelimit_test

import (
	"fmt"

	"github.com/herald-dev/herald/internal/ratelimit"
)

func ExampleParseLimit() {
	l, err := ratelimit.ParseLimit("1/s,20/m")
	if err != nil {
		panic(err)
	}
	fmt.Println(l, len(l), l[1].N, l[1].Per)
	half, _ := ratelimit.ParseLimit("0.5/s")
	fmt.Println(half)
	_, err = ratelimit.ParseLimit("2.5/s")
	fmt.Println(err)
	// Output:
	// 1/s,20/m 2 20 1m0s
	// 1/2s
	// ratelimit: limit "2.5/s" has the fractional send count 2.5; write whole sends per span, e.g. "5/2s"
}
