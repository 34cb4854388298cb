package telegramfake

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// Fault is a failure injected into a sendMessage request.
type Fault int

// The faults a test can inject. The zero Fault is no fault.
const (
	// FaultServerError answers 500 with Telegram's JSON error envelope.
	FaultServerError Fault = iota + 1
	// FaultBadGateway answers 502 with an HTML page, as the proxy in front
	// of the Bot API does; the body is not JSON.
	FaultBadGateway
	// FaultHang holds the request without answering until the client gives
	// up or the server is closed; nothing is delivered.
	FaultHang
	// FaultTooMany answers 429 with retry_after 1; nothing is delivered.
	FaultTooMany
	// FaultAcceptThenHang delivers the message (it is recorded and counted)
	// and then hangs like FaultHang: the client cannot know it went out.
	// A request that fails validation or flood control gets that error
	// instead, since there is nothing to deliver.
	FaultAcceptThenHang
	// FaultParseEntities answers a formatted message (one with a
	// parse_mode) 400 "can't parse entities", as Telegram does when its
	// parser disagrees with the client's; a plain-text message is delivered
	// as usual. It models markup that only Telegram rejects.
	FaultParseEntities
)

var faultNames = map[Fault]string{
	FaultServerError:    "server_error",
	FaultBadGateway:     "bad_gateway",
	FaultHang:           "hang",
	FaultTooMany:        "too_many",
	FaultAcceptThenHang: "accept_then_hang",
	FaultParseEntities:  "parse_entities",
}

// String returns the snake_case name used by the /fake/fail endpoint.
func (f Fault) String() string {
	if n, ok := faultNames[f]; ok {
		return n
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// ParseFault reads a fault name as printed by Fault.String.
func ParseFault(name string) (Fault, error) {
	for f, n := range faultNames {
		if n == name {
			return f, nil
		}
	}
	return 0, fmt.Errorf("unknown fault %q: use server_error, bad_gateway, hang, too_many, accept_then_hang or parse_entities", name)
}

// FaultRates injects faults at random into sendMessage requests that no
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
	// Seed seeds the random source, so a run can be repeated.
	Seed uint64 `json:"seed"`
}

// faultRun is a stretch of n requests that get the same fault.
type faultRun struct {
	fault Fault
	n     int
}

// faultState holds everything the fault methods set.
type faultState struct {
	pending    []faultRun
	rates      FaultRates
	rng        *rand.Rand
	outage     bool
	floodUntil time.Time
	// floodAnnounced is set once a 429 has answered a request during the
	// current Force429 flood wait.
	floodAnnounced bool
}

// FailNext makes the next n sendMessage requests fail with f, after any
// faults queued earlier. A non-positive n or an unknown f does nothing.
// Requests refused by Force429 or inside an announced flood wait do not use
// up the queue.
func (s *Server) FailNext(n int, f Fault) {
	if n <= 0 || faultNames[f] == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.pending = append(s.faults.pending, faultRun{fault: f, n: n})
}

// SetFaultRates replaces the random fault rates; the zero FaultRates turns
// random faults off.
func (s *Server) SetFaultRates(r FaultRates) {
	clamp := func(x float64) float64 { return min(max(x, 0), 1) }
	r.ServerError, r.Hang, r.AcceptThenHang = clamp(r.ServerError), clamp(r.Hang), clamp(r.AcceptThenHang)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.rates = r
	s.faults.rng = rand.New(rand.NewPCG(r.Seed, r.Seed^0x9e3779b97f4a7c15))
}

// SetOutage switches an outage on or off. While it is on, every Bot API
// request, getMe included, is answered with the HTML 502 gateway page before
// the token is even looked at.
func (s *Server) SetOutage(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.outage = on
}

// Force429 starts a global flood wait: every Bot API request is answered 429
// until retryAfter (Telegram time) has passed, with retry_after counting down
// the remainder. Every request after the first one answered counts in
// Stats.InsideWait and Stats.InsideWaitBot. A non-positive retryAfter ends a
// flood wait early.
func (s *Server) Force429(retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.floodAnnounced = false
	if retryAfter <= 0 {
		s.faults.floodUntil = time.Time{}
		return
	}
	s.faults.floodUntil = s.cfg.Now().Add(toReal(retryAfter, s.cfg.TimeScale))
}

// takeFaultLocked picks the fault for the sendMessage request being served:
// the head of the FailNext queue, else a random one, else none.
func (s *Server) takeFaultLocked() Fault {
	fs := &s.faults
	if len(fs.pending) > 0 {
		run := &fs.pending[0]
		f := run.fault
		if run.n--; run.n == 0 {
			fs.pending = fs.pending[1:]
		}
		s.stats.Injected++
		return f
	}
	r := fs.rates
	if fs.rng == nil || r.ServerError+r.Hang+r.AcceptThenHang == 0 {
		return 0
	}
	x := fs.rng.Float64()
	var f Fault
	switch {
	case x < r.ServerError:
		f = FaultServerError
		if fs.rng.IntN(2) == 1 {
			f = FaultBadGateway
		}
	case x < r.ServerError+r.Hang:
		f = FaultHang
	case x < r.ServerError+r.Hang+r.AcceptThenHang:
		f = FaultAcceptThenHang
	default:
		return 0
	}
	s.stats.Injected++
	return f
}

// hang holds the request until its client gives up or the server closes;
// on close it drops the connection rather than answer.
func (s *Server) hang(r *http.Request) {
	s.mu.Lock()
	s.stats.Hangs++
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
