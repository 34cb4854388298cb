package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// quoteLimit caps the part of a non-JSON body quoted in a description.
const quoteLimit = 120

// classify turns the error MakeRequest returned, plus what the exchange
// saw on the wire, into an *Error.
func (c *Client) classify(err error, x snapshot) *Error {
	if x.doErr != nil {
		return c.networkError(x)
	}
	if !x.responded {
		// MakeRequest failed before sending: the URL built from APIURL
		// and the token did not parse. Only configuration can fix it.
		return &Error{Reason: reasonNotFound, Description: "building the request failed: " + c.Redact(err.Error())}
	}
	var apiErr *tgbotapi.Error
	if errors.As(err, &apiErr) {
		code := apiErr.Code
		if code == 0 {
			code = x.status
		}
		return c.apiError(code, apiErr.Message, apiErr.ResponseParameters)
	}
	if x.readErr != nil {
		// Telegram answered, so it saw the request, but the answer was
		// cut off: whether the message went out is unknown.
		return &Error{
			Reason:      ReasonTimeout,
			Code:        x.status,
			Description: fmt.Sprintf("reading the HTTP %d response failed: %s", x.status, c.Redact(x.readErr.Error())),
			Ambiguous:   true,
			causes:      c.safeCauses(x.readErr),
		}
	}
	return &Error{
		Reason: ReasonServerError,
		Code:   x.status,
		Description: fmt.Sprintf("HTTP %d %s with a body that is not Telegram JSON (%s): %q",
			x.status, http.StatusText(x.status), c.Redact(err.Error()), c.quoteBody(x.head)),
	}
}

// networkError classifies a failure of http.Client.Do by whether the
// request had been completely written when it happened.
func (c *Client) networkError(x snapshot) *Error {
	e := &Error{
		Reason:      reasonTransport,
		Description: c.Redact(x.doErr.Error()),
		causes:      c.safeCauses(x.doErr),
	}
	if x.written {
		e.Reason = ReasonTimeout
		e.Ambiguous = true
	}
	return e
}

// safeCauses returns the errors behind err that Unwrap may expose: the
// error inside a *url.Error if its text is free of the token (or a
// redacted copy otherwise), plus the context error, if any.
func (c *Client) safeCauses(err error) []error {
	inner := err
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err
	}
	var causes []error
	if inner != nil {
		if text := inner.Error(); c.Redact(text) == text {
			causes = append(causes, inner)
		} else {
			causes = append(causes, errors.New(c.Redact(text)))
		}
	}
	for _, ctxErr := range []error{context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, ctxErr) {
			causes = append(causes, ctxErr)
		}
	}
	return causes
}

// apiError classifies an answer carrying Telegram's error_code and
// description.
func (c *Client) apiError(code int, desc string, params tgbotapi.ResponseParameters) *Error {
	e := &Error{
		Reason:      reasonFor(code, desc, params),
		Code:        code,
		Description: c.Redact(desc),
		RetryAfter:  time.Duration(params.RetryAfter) * time.Second,
		MigrateTo:   params.MigrateToChatID,
	}
	if e.Reason == ReasonRateLimited && e.RetryAfter == 0 {
		e.RetryAfter = retryAfterFromText(desc)
	}
	return e
}

// reasonFor maps Telegram's error code and description to a Reason. The
// descriptions are matched on stable fragments Telegram has used for years.
func reasonFor(code int, desc string, params tgbotapi.ResponseParameters) Reason {
	d := strings.ToLower(desc)
	switch {
	case code == http.StatusTooManyRequests:
		return ReasonRateLimited
	case code >= 500:
		return ReasonServerError
	case code == http.StatusUnauthorized:
		return ReasonUnauthorized
	case code == http.StatusNotFound:
		return reasonNotFound
	case code == http.StatusRequestEntityTooLarge:
		return reasonPhotoRejected
	case code == http.StatusForbidden:
		switch {
		case strings.Contains(d, "blocked by the user"), strings.Contains(d, "user is deactivated"):
			return ReasonBlocked
		case strings.Contains(d, "kicked"), strings.Contains(d, "not a member"):
			return reasonKicked
		}
		return reasonForbidden
	case code == http.StatusBadRequest:
		switch {
		case params.MigrateToChatID != 0, strings.Contains(d, "upgraded to a supergroup"):
			return ReasonMigrated
		case strings.Contains(d, "can't parse entities"):
			return ReasonParseEntities
		case strings.Contains(d, "chat not found"):
			return ReasonChatNotFound
		case strings.Contains(d, "message is too long"), strings.Contains(d, "text is too long"),
			strings.Contains(d, "caption is too long"):
			return ReasonTooLong
		case strings.Contains(d, "message is not modified"):
			return reasonNotModified
		case strings.Contains(d, "message to edit not found"), strings.Contains(d, "message can't be edited"),
			strings.Contains(d, "message to be replied not found"):
			return ReasonMessageGone
		case strings.Contains(d, "wrong file identifier"), strings.Contains(d, "failed to get http url content"),
			strings.Contains(d, "wrong type of the web page content"), strings.Contains(d, "photo_invalid_dimensions"),
			strings.Contains(d, "image_process_failed"), strings.Contains(d, "wrong remote file"):
			return reasonPhotoRejected
		}
		return ReasonBadRequest
	case code >= 400:
		return ReasonBadRequest
	}
	// ok:false without a 4xx or 5xx code is not something Telegram
	// sends; treat it like a broken server.
	return ReasonServerError
}

// retryAfterFromText reads N from "... retry after N" for 429 answers that
// lack parameters.retry_after.
func retryAfterFromText(desc string) time.Duration {
	const marker = "retry after "
	i := strings.Index(strings.ToLower(desc), marker)
	if i < 0 {
		return 0
	}
	rest := desc[i+len(marker):]
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(rest[:end])
	if err != nil {
		return 0
	}
	return time.Duration(n) * time.Second
}

// quoteBody makes a short, single-line, token-free excerpt of a body.
func (c *Client) quoteBody(head []byte) string {
	s := strings.Join(strings.Fields(string(head)), " ")
	s = c.redactTail(s)
	if len(s) > quoteLimit {
		cut := quoteLimit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
