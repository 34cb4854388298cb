package telegramfake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// webhook is a bot's webhook as setWebhook left it.
type webhook struct {
	url            string
	secret         string
	maxConnections int
	setAt          time.Time

	delivered   int64
	failed      int64
	lastError   string
	lastErrorAt time.Time
}

// maxWebhookBackoff caps the webhook backoff, in units of Config.WebhookRetry
// (WEBHOOK_MAX_RESEND_TIMEOUT; the Bot API picks at random up to twice it).
const maxWebhookBackoff = 60

// maxRetryAfter caps a webhook's Retry-After, in seconds.
const maxRetryAfter = 3600

// okDescribed is an answer with a description beside its result, as
// setWebhook and deleteWebhook give.
type okDescribed struct {
	OK          bool   `json:"ok"`
	Result      any    `json:"result"`
	Description string `json:"description,omitempty"`
}

// setWebhook sets, changes or (with an empty url) deletes the bot's
// webhook, as the Bot API does: a second non-empty setWebhook within a
// second is answered 429; a call that changes nothing answers "Webhook is
// already set"; setting a webhook ends a long poll with a 409; the old
// webhook is closed before the new URL is checked, so a call with a bad URL
// leaves none. Unlike api.telegram.org, and like a Bot API server in
// --local mode, the fake accepts http URLs on any port, and it does not
// try to reach the URL before answering.
func (s *Server) setWebhook(w http.ResponseWriter, r *http.Request, b *bot) {
	params, err := readParams(w, r)
	if err != nil {
		s.fail(w, b, badRequest("can't parse request: "+err.Error()))
		return
	}
	s.changeWebhook(w, b, params, params["url"])
}

// deleteWebhook is setWebhook with an empty url.
func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request, b *bot) {
	params, err := readParams(w, r)
	if err != nil {
		s.fail(w, b, badRequest("can't parse request: "+err.Error()))
		return
	}
	s.changeWebhook(w, b, params, "")
}

func (s *Server) changeWebhook(w http.ResponseWriter, b *bot, params map[string]string, newURL string) {
	s.mu.Lock()
	now := s.cfg.Now()
	st := &b.x
	if newURL != "" {
		if now.Before(st.nextSetWebhook) {
			s.tallyLocked(b, func(st *Stats) { st.TooManySetWebhook++ })
			s.mu.Unlock()
			s.fail(w, b, tooMany(1))
			return
		}
		st.nextSetWebhook = now.Add(toReal(time.Second, s.cfg.TimeScale))
	}
	secret, maxConn := "", 0
	if newURL != "" {
		secret, maxConn = params["secret_token"], intParam(params["max_connections"], 40, 1, 100)
	}
	drop := paramBool(params["drop_pending_updates"])
	if st.hook.url == newURL && st.hook.secret == secret && st.hook.maxConnections == maxConn && !drop {
		st.setAllowed(params["allowed_updates"])
		s.mu.Unlock()
		desc := "Webhook is already set"
		if newURL == "" {
			desc = "Webhook is already deleted"
		}
		writeJSON(w, http.StatusOK, okDescribed{OK: true, Result: true, Description: desc})
		return
	}
	if newURL != "" {
		st.abortPollLocked(conflictSetHook)
	}
	had := st.hook.url != ""
	st.hook = webhook{}
	st.hookGen++
	if drop {
		st.queue, st.again = nil, nil
	}
	desc := "Webhook is already deleted"
	if had {
		desc = "Webhook was deleted"
	}
	if newURL != "" {
		if e := checkWebhook(newURL, secret); e != nil {
			st.signal()
			s.notifyLocked()
			s.mu.Unlock()
			s.fail(w, b, e)
			return
		}
		st.hook = webhook{url: newURL, secret: secret, maxConnections: maxConn, setAt: now}
		st.setAllowed(params["allowed_updates"])
		s.x.workers.Add(1)
		go s.webhookLoop(b, st.hookGen)
		desc = "Webhook was set"
	}
	st.signal()
	s.notifyLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, okDescribed{OK: true, Result: true, Description: desc})
}

// checkWebhook checks a webhook URL and secret token as the Bot API does,
// except that http is accepted as well as https.
func checkWebhook(raw, secret string) *apiError {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (!strings.EqualFold(u.Scheme, "https") && !strings.EqualFold(u.Scheme, "http")) {
		return badRequest("invalid webhook URL specified")
	}
	if len(secret) > 256 {
		return badRequest("secret token is too long")
	}
	for _, c := range secret {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return badRequest("secret token contains unallowed characters")
		}
	}
	return nil
}

// webhookInfoJSON is the WebhookInfo object.
type webhookInfoJSON struct {
	URL                  string   `json:"url"`
	HasCustomCertificate bool     `json:"has_custom_certificate"`
	PendingUpdateCount   int      `json:"pending_update_count"`
	LastErrorDate        int64    `json:"last_error_date,omitempty"`
	LastErrorMessage     string   `json:"last_error_message,omitempty"`
	MaxConnections       int      `json:"max_connections,omitempty"`
	IPAddress            string   `json:"ip_address,omitempty"`
	AllowedUpdates       []string `json:"allowed_updates,omitempty"`
}

// getWebhookInfo describes the bot's webhook, or its getUpdates queue when
// it has none (url empty, pending_update_count the unconfirmed updates).
func (s *Server) getWebhookInfo(w http.ResponseWriter, _ *http.Request, b *bot) {
	s.mu.Lock()
	st := &b.x
	st.pruneLocked(s.cfg.Now())
	info := webhookInfoJSON{
		URL:                st.hook.url,
		PendingUpdateCount: st.pending(),
		LastErrorMessage:   st.hook.lastError,
		MaxConnections:     st.hook.maxConnections,
		AllowedUpdates:     st.allowed,
	}
	if !st.hook.lastErrorAt.IsZero() {
		info.LastErrorDate = st.hook.lastErrorAt.Unix()
	}
	if u, err := url.Parse(st.hook.url); err == nil && st.hook.url != "" {
		info.IPAddress = "<unknown>"
		if ip := net.ParseIP(u.Hostname()); ip != nil {
			info.IPAddress = ip.String()
		}
	}
	s.mu.Unlock()
	writeResult(w, info)
}

// webhookLoop posts the bot's updates to its webhook, one at a time and in
// order (Redeliver copies first), for as long as the webhook it was started
// for stays set. A delivery answered 2xx is done; any other answer or a
// failed connection is retried with the Bot API's backoff, and the update is
// dropped once the next try would come after it expires.
func (s *Server) webhookLoop(b *bot, gen int) {
	defer s.x.workers.Done()
	ctx := s.x.ctx
	for {
		s.mu.Lock()
		st := &b.x
		if s.closed || st.hookGen != gen {
			s.mu.Unlock()
			return
		}
		st.pruneLocked(s.cfg.Now())
		var d *delivery
		if len(st.again) > 0 {
			d = st.again[0]
		} else if len(st.queue) > 0 {
			d = st.queue[0]
		}
		wake, hookURL, secret := st.wake, st.hook.url, st.hook.secret
		s.mu.Unlock()

		if d == nil {
			select {
			case <-wake:
			case <-ctx.Done():
				return
			}
			continue
		}
		if wait := time.Until(d.notBefore); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-wake:
			case <-ctx.Done():
				t.Stop()
				return
			}
			t.Stop()
			continue
		}

		errMsg, retryAfter := s.postUpdate(ctx, hookURL, secret, d.u.body)
		if ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		if st.hookGen != gen {
			s.mu.Unlock()
			return
		}
		now := s.cfg.Now()
		if errMsg == "" {
			st.hook.delivered++
			d.u.delivered()
			st.remove(d)
		} else {
			st.hook.failed++
			st.hook.lastError, st.hook.lastErrorAt = errMsg, now
			next := s.backoff(d, retryAfter)
			if now.Add(toReal(next, s.cfg.TimeScale)).After(d.u.expires) {
				st.remove(d)
			} else {
				d.notBefore = time.Now().Add(toReal(next, s.cfg.TimeScale))
			}
		}
		s.notifyLocked()
		s.mu.Unlock()
	}
}

// backoff is the Telegram-time wait before the next try of d after a
// failure: the webhook's Retry-After when it gave one; else none after the
// first failure, then 2, 4, 8… units, at most maxWebhookBackoff.
func (s *Server) backoff(d *delivery, retryAfter int) time.Duration {
	unit := s.cfg.WebhookRetry
	if d.delay == 0 {
		d.delay = unit
	}
	next := time.Duration(min(retryAfter, maxRetryAfter)) * time.Second
	if retryAfter <= 0 && d.attempts > 0 {
		d.delay = min(2*d.delay, maxWebhookBackoff*unit)
		next = d.delay
	}
	d.attempts++
	return next
}

// remove takes a delivery out of the queue or the Redeliver copies.
func (st *botState) remove(d *delivery) {
	for _, list := range []*[]*delivery{&st.again, &st.queue} {
		for i, x := range *list {
			if x == d {
				*list = append((*list)[:i:i], (*list)[i+1:]...)
				return
			}
		}
	}
}

// postUpdate posts one update to a webhook. It returns "" when the webhook
// answered 2xx, or the error getWebhookInfo reports, with the answer's
// Retry-After in seconds (0 when none).
func (s *Server) postUpdate(ctx context.Context, hookURL, secret string, body []byte) (string, int) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hookURL, bytes.NewReader(body))
	if err != nil {
		return "Invalid webhook URL", 0
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	resp, err := s.x.client.Do(req)
	if err != nil {
		var ne net.Error
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return "Connection refused", 0
		case errors.As(err, &ne) && ne.Timeout():
			return "Read timeout expired", 0
		}
		return "Webhook connection closed", 0
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return "", 0
	}
	retry, _ := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After")))
	return fmt.Sprintf("Wrong response from the webhook: %d %s", resp.StatusCode, http.StatusText(resp.StatusCode)), max(retry, 0)
}
