package telegramfake

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// fault is a failure injected into a send request: sendMessage, sendPhoto
// or an edit method (editMessageText, editMessageCaption,
// editMessageReplyMarkup). The other methods take no faults.
type fault int

// The faults a test can inject. The zero fault is no fault.
const (
	// FaultServerError answers 500 with Telegram's JSON error envelope.
	FaultServerError fault = iota + 1
	// FaultBadGateway answers 502 with an HTML page, as the proxy in front
	// of the Bot API does; the body is not JSON.
	FaultBadGateway
	// FaultHang holds the request without answering until the client gives
	// up or the server is closed; nothing is delivered.
	FaultHang
	// FaultTooMany answers 429 with retry_after 1; nothing is delivered.
	FaultTooMany
	// FaultAcceptThenHang delivers the message or applies the edit (it is
	// recorded and counted) and then hangs like FaultHang: the client
	// cannot know it went out.
	// A request that fails validation or flood control gets that error
	// instead, since there is nothing to deliver.
	FaultAcceptThenHang
	// FaultParseEntities answers a formatted message (one with a
	// parse_mode) 400 "can't parse entities", as Telegram does when its
	// parser disagrees with the client's; a plain-text message is delivered
	// as usual. It models markup that only Telegram rejects.
	FaultParseEntities
)

var faultNames = map[fault]string{
	FaultServerError:    "server_error",
	FaultBadGateway:     "bad_gateway",
	FaultHang:           "hang",
	FaultTooMany:        "too_many",
	FaultAcceptThenHang: "accept_then_hang",
	FaultParseEntities:  "parse_entities",
}

// String returns the snake_case name used by the /fake/fail endpoint.
func (f fault) String() string {
	if n, ok := faultNames[f]; ok {
		return n
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// faultNamed reads a fault name as printed by fault.String.
func faultNamed(name string) (fault, error) {
	for f, n := range faultNames {
		if n == name {
			return f, nil
		}
	}
	return 0, fmt.Errorf("unknown fault %q: use server_error, bad_gateway, hang, too_many, accept_then_hang or parse_entities", name)
}

// FaultRates injects faults at random into send requests that no
// FailNext fault is pending for. Each rate is a fraction from 0 to 1 of
// requests; values outside that range are clamped, and the rates are tried
// in field order, so their sum should stay at or below 1.
type FaultRates struct {
	// ServerError is the fraction answered with a 5xx: half of them 500
	// with JSON, half 502 with the HTML gateway page.
	ServerError float64 `json:"server_error"`
	// Hang is the fraction held unanswered, as FaultHang.
	Hang float64 `json:"hang"`
	// AcceptThenHang is the fraction delivered but unanswered, as
	// FaultAcceptThenHang.
	AcceptThenHang float64 `json:"accept_then_hang"`
	// Seed seeds the random source, so a run can be repeated. Every bot
	// the rates are set for draws from its own source with this seed, so
	// one bot's sequence does not depend on the other bots' traffic.
	Seed uint64 `json:"seed"`
}

// faultRun is a stretch of n requests that get the same fault.
type faultRun struct {
	fault fault
	n     int
}

// faultState holds what the fault methods set for the fake as a whole,
// without a bot selector.
type faultState struct {
	// pending are FailNext faults for the next requests of any bot.
	pending []faultRun
	// outage is the outage of the whole API: every request, whatever its
	// token, gets the gateway page.
	outage bool
}

// botFaults holds what the fault methods set for one bot.
type botFaults struct {
	pending    []faultRun // FailNext faults for this bot's next requests
	rates      FaultRates
	rng        *rand.Rand
	outage     bool
	floodUntil time.Time
	// floodAnnounced is set once a 429 has answered a request of the bot
	// during its current Force429 flood wait.
	floodAnnounced bool
}

// Bot selectors. The fault methods below take optional trailing bot
// selectors, each the name of a bot (see Bots) or its id in decimal. With
// none, a method acts on every bot, as it did when the fake served one. An
// unknown selector is logged and the call changes nothing; the control
// endpoints and Remote answer it with an error instead.

// FailNext makes the next n send requests fail with f, after any
// faults queued earlier. With bot selectors the faults are queued for each
// selected bot's own requests; without, for the next requests of any bot.
// A request takes its bot's queue first, then the shared one. A
// non-positive n or an unknown f does nothing. Requests refused by Force429
// or inside an announced flood wait do not use up the queues.
func (s *Server) FailNext(n int, f fault, bots ...string) {
	if n <= 0 || faultNames[f] == "" {
		return
	}
	run := faultRun{fault: f, n: n}
	if len(bots) == 0 {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.faults.pending = append(s.faults.pending, run)
		return
	}
	s.forBots(bots, func(b *bot) { b.faults.pending = append(b.faults.pending, run) })
}

// SetFaultRates replaces the random fault rates of the selected bots, or of
// every bot; the zero FaultRates turns random faults off.
func (s *Server) SetFaultRates(r FaultRates, bots ...string) {
	clamp := func(x float64) float64 { return min(max(x, 0), 1) }
	r.ServerError, r.Hang, r.AcceptThenHang = clamp(r.ServerError), clamp(r.Hang), clamp(r.AcceptThenHang)
	s.forBots(bots, func(b *bot) {
		b.faults.rates = r
		b.faults.rng = rand.New(rand.NewPCG(r.Seed, r.Seed^0x9e3779b97f4a7c15))
	})
}

// SetOutage switches an outage on or off.
//
// Without bot selectors it is an outage of the whole Bot API: while it is
// on, every request, getMe included, is answered with the HTML 502 gateway
// page before the token is even looked at; switching it off also ends every
// bot's own outage. With selectors only the selected bots' requests get the
// gateway page; the others are served. A bot is out while either outage is
// on.
func (s *Server) SetOutage(on bool, bots ...string) {
	if len(bots) == 0 {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.faults.outage = on
		if !on {
			for _, b := range s.bots {
				b.faults.outage = false
			}
		}
		return
	}
	s.forBots(bots, func(b *bot) { b.faults.outage = on })
}

// Force429 starts a flood wait for the selected bots, or for every bot:
// every request of such a bot that sends or edits a message is answered
// 429 until retryAfter (Telegram time) has passed, with retry_after
// counting down the remainder (getUpdates, answerCallbackQuery, the webhook
// methods, getMe and getChat go on).
// Each bot's wait is announced by its own first 429; every request of the
// bot after that counts in Stats.InsideWait and Stats.InsideWaitBot. A
// non-positive retryAfter ends the flood waits early.
func (s *Server) Force429(retryAfter time.Duration, bots ...string) {
	var until time.Time
	if retryAfter > 0 {
		until = s.cfg.Now().Add(toReal(retryAfter, s.cfg.TimeScale))
	}
	s.forBots(bots, func(b *bot) {
		b.faults.floodAnnounced = false
		b.faults.floodUntil = until
	})
}

// takeFaultLocked picks the fault for a send request of b: the head
// of b's FailNext queue, else of the shared one, else a random one drawn
// from b's rates, else none.
func (s *Server) takeFaultLocked(b *bot) fault {
	f := takeRun(&b.faults.pending)
	if f == 0 {
		f = takeRun(&s.faults.pending)
	}
	if f == 0 {
		f = b.faults.draw()
	}
	if f != 0 {
		s.tallyLocked(b, func(st *Stats) { st.Injected++ })
	}
	return f
}

// takeRun takes one fault from the head of a FailNext queue, or returns 0.
func takeRun(q *[]faultRun) fault {
	if len(*q) == 0 {
		return 0
	}
	run := &(*q)[0]
	f := run.fault
	if run.n--; run.n == 0 {
		*q = (*q)[1:]
	}
	return f
}

// draw picks a random fault under the bot's rates, or 0.
func (fs *botFaults) draw() fault {
	r := fs.rates
	if fs.rng == nil || r.ServerError+r.Hang+r.AcceptThenHang == 0 {
		return 0
	}
	x := fs.rng.Float64()
	switch {
	case x < r.ServerError:
		if fs.rng.IntN(2) == 1 {
			return FaultBadGateway
		}
		return FaultServerError
	case x < r.ServerError+r.Hang:
		return FaultHang
	case x < r.ServerError+r.Hang+r.AcceptThenHang:
		return FaultAcceptThenHang
	}
	return 0
}

// hang holds the request until its client gives up or the server closes;
// on close it drops the connection rather than answer.
func (s *Server) hang(r *http.Request, b *bot) {
	s.mu.Lock()
	s.tallyLocked(b, func(st *Stats) { st.Hangs++ })
	hook := s.onHang
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	select {
	case <-r.Context().Done():
	case <-s.closing:
		panic(http.ErrAbortHandler)
	}
}
