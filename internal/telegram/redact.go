package telegram

import (
	"net/url"
	"sort"
	"strings"
)

// redacted replaces the bot token wherever it would otherwise appear.
const redacted = "<redacted>"

// tokenForms lists the spellings of token that can appear in URLs and
// error texts: as is, path-escaped, and query-escaped with upper- and
// lower-case hex digits, longest first so that no form is replaced
// piecemeal.
func tokenForms(token string) []string {
	if token == "" {
		return nil
	}
	seen := map[string]bool{}
	var forms []string
	for _, f := range []string{
		token,
		url.PathEscape(token),
		url.QueryEscape(token),
		lowerEscapes(url.QueryEscape(token)),
	} {
		if !seen[f] {
			seen[f] = true
			forms = append(forms, f)
		}
	}
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	return forms
}

// lowerEscapes lower-cases the two hex digits after every '%'.
func lowerEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1] = lowerASCII(b[i+1])
			b[i+2] = lowerASCII(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Redact returns s with every occurrence of the client's bot token, plain
// or URL-escaped, replaced by "<redacted>".
func (c *Client) Redact(s string) string {
	for _, f := range c.forms {
		s = strings.ReplaceAll(s, f, redacted)
	}
	return s
}

// redactTail redacts s and then drops a trailing fragment that is the start
// of a token form, as left behind when s was cut from a longer text.
func (c *Client) redactTail(s string) string {
	s = c.Redact(s)
	for _, f := range c.forms {
		for k := len(f) - 1; k > 0; k-- {
			if strings.HasSuffix(s, f[:k]) {
				s = s[:len(s)-k]
				break
			}
		}
	}
	return s
}
