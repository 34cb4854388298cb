package telegramfake

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Remote reads and steers a fake served by Handler in another process, such
// as the one a benchmark starts.
type Remote struct {
	// URL is the fake's base URL, e.g. "http://127.0.0.1:41234".
	URL string
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
}

func (rm Remote) client() *http.Client {
	if rm.Client != nil {
		return rm.Client
	}
	return http.DefaultClient
}

// do sends a request to path and decodes a JSON answer into out when out is
// not nil.
func (rm Remote) do(ctx context.Context, method, path string, q url.Values, out any) error {
	u := strings.TrimSuffix(rm.URL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return fmt.Errorf("telegramfake: Remote.URL %q: %w", rm.URL, err)
	}
	resp, err := rm.client().Do(req)
	if err != nil {
		return fmt.Errorf("telegramfake: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return statusError{code: resp.StatusCode,
			msg: fmt.Sprintf("telegramfake: %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(msg)))}
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("telegramfake: decoding %s answer: %w", path, err)
	}
	return nil
}

// Stats fetches the counters, with each bot's own in Stats.Bots, and the
// number of recorded messages.
func (rm Remote) Stats(ctx context.Context) (statsReport, error) {
	var rep statsReport
	err := rm.do(ctx, http.MethodGet, "/fake/stats", nil, &rep)
	return rep, err
}

// Messages fetches the recorded messages of every bot from index since
// onwards.
func (rm Remote) Messages(ctx context.Context, since int) ([]Message, error) {
	var msgs []Message
	err := rm.do(ctx, http.MethodGet, "/fake/messages", url.Values{"since": {strconv.Itoa(since)}}, &msgs)
	return msgs, err
}

// MessagesOf fetches the messages sent by bot (its name or id), skipping
// the first since of them.
func (rm Remote) MessagesOf(ctx context.Context, bot string, since int) ([]Message, error) {
	var msgs []Message
	err := rm.do(ctx, http.MethodGet, "/fake/messages", url.Values{"bot": {bot}, "since": {strconv.Itoa(since)}}, &msgs)
	return msgs, err
}

// Bots fetches the bots the fake serves.
func (rm Remote) Bots(ctx context.Context) ([]botInfo, error) {
	var bots []botInfo
	err := rm.do(ctx, http.MethodGet, "/fake/bots", nil, &bots)
	return bots, err
}

// withBots adds bot selectors to the query of a control request.
func withBots(q url.Values, bots []string) url.Values {
	if len(bots) > 0 {
		q["bot"] = append([]string(nil), bots...)
	}
	return q
}

// Reset calls Server.Reset.
func (rm Remote) Reset(ctx context.Context) error {
	return rm.do(ctx, http.MethodPost, "/fake/reset", nil, nil)
}

// SetOutage calls Server.SetOutage; an unknown bot is an error.
func (rm Remote) SetOutage(ctx context.Context, on bool, bots ...string) error {
	return rm.do(ctx, http.MethodPost, "/fake/outage", withBots(url.Values{"on": {strconv.FormatBool(on)}}, bots), nil)
}

// Force429 calls Server.Force429; an unknown bot is an error.
func (rm Remote) Force429(ctx context.Context, retryAfter time.Duration, bots ...string) error {
	return rm.do(ctx, http.MethodPost, "/fake/force429", withBots(url.Values{"retry_after": {retryAfter.String()}}, bots), nil)
}

// FailNext calls Server.FailNext; an unknown bot is an error.
func (rm Remote) FailNext(ctx context.Context, n int, f fault, bots ...string) error {
	return rm.do(ctx, http.MethodPost, "/fake/fail", withBots(url.Values{"n": {strconv.Itoa(n)}, "fault": {f.String()}}, bots), nil)
}

// SetFaultRates calls Server.SetFaultRates; an unknown bot is an error.
func (rm Remote) SetFaultRates(ctx context.Context, r FaultRates, bots ...string) error {
	q := url.Values{
		"server_error":     {strconv.FormatFloat(r.ServerError, 'g', -1, 64)},
		"hang":             {strconv.FormatFloat(r.Hang, 'g', -1, 64)},
		"accept_then_hang": {strconv.FormatFloat(r.AcceptThenHang, 'g', -1, 64)},
		"seed":             {strconv.FormatUint(r.Seed, 10)},
	}
	return rm.do(ctx, http.MethodPost, "/fake/fault-rates", withBots(q, bots), nil)
}

// SetChat calls Server.SetChat.
func (rm Remote) SetChat(ctx context.Context, chat string, b ChatBehavior) error {
	q := url.Values{
		"chat":          {chat},
		"blocked":       {strconv.FormatBool(b.Blocked)},
		"kicked":        {strconv.FormatBool(b.Kicked)},
		"not_found":     {strconv.FormatBool(b.NotFound)},
		"never_started": {strconv.FormatBool(b.NeverStarted)},
	}
	if b.MigrateTo != 0 {
		q.Set("migrate_to", strconv.FormatInt(b.MigrateTo, 10))
	}
	return rm.do(ctx, http.MethodPost, "/fake/chat", q, nil)
}
