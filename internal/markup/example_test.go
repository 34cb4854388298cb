package markup_test

import (
	"fmt"

	"github.com/herald-dev/herald/internal/markup"
)

// Split keeps every part valid: formatting that is open at a cut is closed at
// the end of one part and opened again at the start of the next.
func ExampleSplit() {
	text := `<b>Disk almost full</b> on <a href="https://grafana.example.com/d/disk">db-1 and db-2</a>`
	parts, err := markup.Split(text, markup.HTML, 30)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, p := range parts {
		n, _ := markup.VisibleLen(p, markup.HTML)
		fmt.Println(n, p)
	}
	// Output:
	// 29 <b>Disk almost full</b> on <a href="https://grafana.example.com/d/disk">db-1 and </a>
	// 4 <a href="https://grafana.example.com/d/disk">db-2</a>
}

// A text that does not parse is split as plain text and the error is
// returned with the parts, so the caller can send it without parse_mode.
func ExampleSplit_invalid() {
	parts, err := markup.Split("1 < 2 and 3 > 2", markup.HTML, 10)
	fmt.Printf("%q\n%v\n", parts, err)
	// Output:
	// ["1 < 2 and " "3 > 2"]
	// can't parse entities: Unsupported start tag "" at byte offset 2
}

func ExampleEscape() {
	fmt.Println(markup.Escape("Load: 3.5 (max 4)!", markup.MarkdownV2))
	fmt.Println(markup.Escape("a < b && c", markup.HTML))
	// Output:
	// Load: 3\.5 \(max 4\)\!
	// a &lt; b &amp;&amp; c
}
