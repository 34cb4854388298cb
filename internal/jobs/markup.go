package jobs

import (
	"errors"
	"strings"

	"github.com/herald-dev/herald/internal/markup"
)

// checkMarkup adds a "text" field error when msg's text will not parse in
// its parse mode, naming the problem as Telegram would and the way out. It
// says nothing about a blank text or an unknown mode: Validate reports those.
func checkMarkup(msg SendMessage, verr *ValidationError) {
	mode, err := markup.ParseMode(msg.ParseMode)
	if err != nil || mode == markup.None || strings.TrimSpace(msg.Text) == "" {
		return
	}
	err = markup.Validate(msg.Text, mode)
	if err == nil {
		return
	}
	hint := `escape a literal <, > or & as &lt;, &gt; or &amp;`
	if mode == markup.MarkdownV2 {
		hint = "escape a literal _ * [ ] ( ) ~ ` > # + - = | { } . ! with a backslash"
	}
	var perr *markup.ParseError
	if !errors.As(err, &perr) {
		verr.add("text", "is not valid %s: %v", mode, err)
		return
	}
	verr.add("text", "is not valid %s, Telegram would refuse it: %s at byte offset %d; %s, or send parse_mode \"none\"",
		mode, perr.Msg, perr.Offset, hint)
}
