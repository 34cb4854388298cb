package worker

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/telegram"
)

// fillCaption cuts a photo's caption off text, filled up to
// telegram.MaxCaption visible units. markup.Split alone prefers a paragraph
// break anywhere in the window, so a title followed by one long paragraph
// would get the title only; here the text after each cut is split again
// into the room left, as long as the new cut ends a word (or, for a word
// that starts a line and is longer than the room, anywhere). It returns the
// caption and the rest as valid markup, or ok false when the text fits in
// the caption or cannot be cut this way.
//
// Pieces are appended only where the caption so far is a byte prefix of the
// text, so no entity crosses a joint. The last piece may end inside an
// entity (Split closes it, and re-opens it in the rest) except in
// MarkdownV2, where joined parts can read differently ("_a_"+"_b_"): there
// the caption stops at an earlier cut outside every entity.
func fillCaption(text string, mode markup.Mode) (caption, rest string, ok bool) {
	src := text
	for {
		used, err := markup.VisibleLen(caption, mode)
		room := telegram.MaxCaption - used
		if err != nil || room <= 0 {
			break
		}
		sub, err := markup.Split(src, mode, room)
		if err != nil {
			return "", "", false
		}
		if len(sub) == 1 {
			if caption == "" {
				return "", "", false // all of it fits
			}
			return caption + src, "", true
		}
		if caption != "" && mode == markup.MarkdownV2 {
			sub = cleanCut(src, sub)
		}
		piece := sub[0]
		if caption != "" && !endsWith(piece, mode, unicode.IsSpace) && !endsWith(caption, mode, isNewline) {
			break // the cut would split a word that fits in a reply
		}
		clean := strings.HasPrefix(src, piece)
		if !clean && caption != "" && mode == markup.MarkdownV2 {
			break
		}
		caption += piece
		if !clean {
			src = strings.Join(sub[1:], "")
			break
		}
		src = src[len(piece):]
	}
	if caption == "" {
		return "", "", false
	}
	return caption, src, true
}

// endsWith reports whether the visible text of s ends with a character
// that is. An empty text or one that does not parse does not.
func endsWith(s string, mode markup.Mode, is func(rune) bool) bool {
	plain, err := markup.Plain(s, mode)
	if err != nil || plain == "" {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(plain)
	return is(r)
}

func isNewline(r rune) bool { return r == '\n' }

// cleanCut tries, for MarkdownV2, earlier cuts than sub's first until one
// is outside every entity, and returns that split (or sub, after a few
// tries).
func cleanCut(src string, sub []string) []string {
	for range 32 {
		if strings.HasPrefix(src, sub[0]) {
			return sub
		}
		n, err := markup.VisibleLen(sub[0], markup.MarkdownV2)
		if err != nil || n <= 1 {
			break
		}
		next, err := markup.Split(src, markup.MarkdownV2, n-1)
		if err != nil {
			break
		}
		sub = next
	}
	return sub
}
