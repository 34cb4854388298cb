package inbound

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Formatting marks become plain text here; the route escapes the result
// for its parse mode (package alerts), so nothing a sender writes can
// become Telegram markup.

var (
	// slackAngle is Slack's <...> syntax: links, mentions, dates.
	slackAngle = regexp.MustCompile(`<([^<>\n]+)>`)
	// Slack's emphasis marks around a run that does not start or end with a space.
	slackBold   = regexp.MustCompile(`(^|[^\w*])\*([^*\s](?:[^*\n]*[^*\s])?)\*($|[^\w*])`)
	slackItalic = regexp.MustCompile(`(^|[^\w_])_([^_\s](?:[^_\n]*[^_\s])?)_($|[^\w_])`)
	slackStrike = regexp.MustCompile(`(^|[^\w~])~([^~\s](?:[^~\n]*[^~\s])?)~($|[^\w~])`)
	codeFence   = regexp.MustCompile("```([a-zA-Z0-9_+-]*\n)?")
	inlineCode  = regexp.MustCompile("`([^`\n]+)`")
	quoteMark   = regexp.MustCompile(`(?m)^(?:&gt;|>)+ ?`)
)

// slackText turns Slack mrkdwn into plain text: emphasis marks dropped,
// <url|label> as "label (url)", <!here> as @here, <@U1> as @U1,
// <#C1|name> as #name, <!date^…|fallback> as its fallback, and Slack's
// three escaped characters decoded.
func slackText(s string) string {
	s = codeFence.ReplaceAllString(s, "")
	s = inlineCode.ReplaceAllString(s, "$1")
	s = slackAngle.ReplaceAllStringFunc(s, func(m string) string { return slackReference(m[1 : len(m)-1]) })
	for i := 0; i < 2; i++ { // twice: adjacent runs share a boundary character
		s = slackBold.ReplaceAllString(s, "$1$2$3")
		s = slackItalic.ReplaceAllString(s, "$1$2$3")
		s = slackStrike.ReplaceAllString(s, "$1$2$3")
	}
	s = quoteMark.ReplaceAllString(s, "")
	return slackUnescape(s)
}

// slackReference renders the inside of one <...>.
func slackReference(in string) string {
	target, label, hasLabel := strings.Cut(in, "|")
	switch {
	case strings.HasPrefix(target, "!date^"):
		return label
	case strings.HasPrefix(target, "!subteam^"):
		return firstOf(label, "@group")
	case strings.HasPrefix(target, "!"):
		return "@" + strings.TrimPrefix(target, "!")
	case strings.HasPrefix(target, "@"), strings.HasPrefix(target, "#"):
		if hasLabel && label != "" {
			return target[:1] + strings.TrimPrefix(label, target[:1])
		}
		return target
	}
	target = slackUnescape(target)
	if !hasLabel || label == "" || label == target {
		return strings.TrimPrefix(target, "mailto:")
	}
	return label + " (" + target + ")"
}

// slackUnescape decodes the three entities Slack escapes in text.
func slackUnescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

var (
	mdLink       = regexp.MustCompile(`!?\[([^\]\n]*)\]\(<?(https?://[^)\s>]+)>?(?:\s+"[^"]*")?\)`)
	mdAutoLink   = regexp.MustCompile(`<(https?://[^>\s]+)>`)
	mdBold       = regexp.MustCompile(`(\*\*|__)([^\s*_](?:.*?[^\s])?)(\*\*|__)`)
	mdItalicStar = regexp.MustCompile(`(^|[^\w*])\*([^*\s](?:[^*\n]*[^*\s])?)\*($|[^\w*])`)
	mdItalicUnd  = regexp.MustCompile(`(^|[^\w_])_([^_\s](?:[^_\n]*[^_\s])?)_($|[^\w_])`)
	mdStrike     = regexp.MustCompile(`~~([^~\n]+)~~`)
	mdSpoiler    = regexp.MustCompile(`\|\|([^|\n]+)\|\|`)
	mdHeading    = regexp.MustCompile(`(?m)^(?:#{1,6}|-#) +`)
	mdBullet     = regexp.MustCompile(`(?m)^(\s*)[-*+] +`)
	mdMention    = regexp.MustCompile(`<(@[!&]?|#)(\d+)>`)
	mdEmoji      = regexp.MustCompile(`<a?:(\w+):\d+>`)
	mdTime       = regexp.MustCompile(`<t:(-?\d{1,13})(?::[tTdDfFR])?>`)
	mdEscape     = regexp.MustCompile(`\\([\\*_~|` + "`" + `>#\[\]()-])`)
)

// markdownText turns Markdown (Discord's flavour, and the subset Teams,
// ntfy and Gotify render) into plain text: [label](url) as "label (url)",
// emphasis, strike, spoiler, heading, quote and code marks dropped,
// bullets as "•", Discord mentions and <t:…> timestamps made readable.
func markdownText(s string) string {
	s = codeFence.ReplaceAllString(s, "")
	// Code spans and escaped characters are set aside so that no rule
	// below reads marks in them.
	var kept []string
	keep := func(v string) string {
		kept = append(kept, v)
		return "\x00" + strconv.Itoa(len(kept)-1) + "\x00"
	}
	s = inlineCode.ReplaceAllStringFunc(s, func(m string) string { return keep(m[1 : len(m)-1]) })
	s = mdEscape.ReplaceAllStringFunc(s, func(m string) string { return keep(m[1:]) })
	s = mdLink.ReplaceAllStringFunc(s, func(m string) string {
		sub := mdLink.FindStringSubmatch(m)
		label := strings.TrimSpace(sub[1])
		if label == "" || label == sub[2] {
			return sub[2]
		}
		return label + " (" + sub[2] + ")"
	})
	s = mdAutoLink.ReplaceAllString(s, "$1")
	s = mdTime.ReplaceAllStringFunc(s, func(m string) string {
		n, err := strconv.ParseInt(mdTime.FindStringSubmatch(m)[1], 10, 64)
		if err != nil {
			return m
		}
		return time.Unix(n, 0).UTC().Format("2006-01-02 15:04 UTC")
	})
	s = mdMention.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "<#") {
			return "#" + m[2:len(m)-1]
		}
		return "@" + strings.TrimLeft(m[2:len(m)-1], "!&")
	})
	s = mdEmoji.ReplaceAllString(s, ":$1:")
	s = mdHeading.ReplaceAllString(s, "")
	s = quoteMark.ReplaceAllString(s, "")
	s = mdBullet.ReplaceAllString(s, "$1• ")
	for i := 0; i < 2; i++ {
		s = mdBold.ReplaceAllString(s, "$2")
		s = mdItalicStar.ReplaceAllString(s, "$1$2$3")
		s = mdItalicUnd.ReplaceAllString(s, "$1$2$3")
	}
	s = mdStrike.ReplaceAllString(s, "$1")
	s = mdSpoiler.ReplaceAllString(s, "$1")
	for i, c := range kept {
		s = strings.Replace(s, "\x00"+strconv.Itoa(i)+"\x00", c, 1)
	}
	return s
}

// firstOf returns the first non-blank value, trimmed.
func firstOf(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// firstLine returns the first non-blank line of s.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// joinBlocks joins the non-blank blocks with blank lines.
func joinBlocks(bs ...string) string {
	out := bs[:0:0]
	for _, b := range bs {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return strings.Join(out, "\n\n")
}
