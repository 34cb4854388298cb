package botapi

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/herald-dev/herald/internal/jobs"
)

// inlineButton is an InlineKeyboardButton as far as Herald carries it: a
// URL button or a callback button. Kinds nothing in Herald can serve
// (login_url, web_app, switch_inline_query, pay, ...) are refused.
type inlineButton struct {
	Text         string `json:"text"`
	URL          string `json:"url"`
	CallbackData string `json:"callback_data"`
}

// replyMarkup is the reply_markup object: Herald carries inline keyboards.
type replyMarkup struct {
	Inline [][]json.RawMessage `json:"inline_keyboard"`
}

// keyboard reads reply_markup ("" for none) into Herald's inline keyboard.
func keyboard(raw string) (*jobs.Keyboard, *refusal) {
	if raw == "" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &obj) != nil {
		return nil, badRequest(descMarkupJSON)
	}
	if _, ok := obj["inline_keyboard"]; !ok {
		// A reply keyboard, its removal or a forced reply concerns the
		// people who answer the bot, which a Herald bot does not read.
		return nil, badRequest("reply_markup: Herald carries inline_keyboard only")
	}
	var rm replyMarkup
	if json.Unmarshal([]byte(raw), &rm) != nil {
		return nil, badRequest("can't parse inline keyboard button: field \"inline_keyboard\" must be an Array of Arrays")
	}
	var kb jobs.Keyboard
	for _, row := range rm.Inline {
		var out []jobs.Button
		for _, b := range row {
			btn, rf := button(b)
			if rf != nil {
				return nil, rf
			}
			out = append(out, btn)
		}
		kb = append(kb, out)
	}
	if len(kb) == 0 {
		return nil, nil
	}
	return &kb, nil
}

// button reads one inline keyboard button.
func button(raw json.RawMessage) (jobs.Button, *refusal) {
	var fields map[string]json.RawMessage
	var b inlineButton
	if json.Unmarshal(raw, &fields) != nil || json.Unmarshal(raw, &b) != nil {
		return jobs.Button{}, badRequest("can't parse inline keyboard button: InlineKeyboardButton must be an Object")
	}
	for k := range fields {
		if k != "text" && k != "url" && k != "callback_data" {
			return jobs.Button{}, badRequest("can't parse inline keyboard button: Herald carries url and callback_data buttons, not " + k)
		}
	}
	switch {
	case strings.TrimSpace(b.Text) == "":
		return jobs.Button{}, badRequest("can't parse inline keyboard button: Text must be non-empty")
	case b.URL == "" && b.CallbackData == "":
		return jobs.Button{}, badRequest("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
	case b.URL != "" && b.CallbackData != "":
		return jobs.Button{}, badRequest("can't parse inline keyboard button: a button carries one of url and callback_data")
	case len(b.CallbackData) > 64:
		return jobs.Button{}, badRequest("BUTTON_DATA_INVALID")
	case b.URL != "" && !httpURL(b.URL):
		return jobs.Button{}, badRequest("inline keyboard button URL '" + b.URL + "' is invalid: Wrong HTTP URL")
	}
	return jobs.Button{Text: b.Text, URL: b.URL, Data: b.CallbackData}, nil
}

// httpURL reports whether s is an absolute http(s) or tg URL.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && ((u.Scheme == "http" || u.Scheme == "https") && u.Host != "" || u.Scheme == "tg")
}
