package statushook

import (
	"crypto/hmac"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is how far a webhook-timestamp may be from the
// receiver's clock, either way, before Verify refuses it as a replay: the
// five minutes the Standard Webhooks reference libraries use.
const DefaultTolerance = 5 * time.Minute

// Errors Verify wraps, so that a receiver can tell why it refused.
var (
	ErrMissingHeader = errors.New("missing header")
	ErrTimestamp     = errors.New("webhook-timestamp")
	ErrNoMatch       = errors.New("no signature matches")
)

// Verify is the receiver's side of Sign. It checks that headers carry a
// webhook-id, a webhook-timestamp within tolerance of now (either way;
// tolerance ≤ 0 means DefaultTolerance) and a webhook-signature with at
// least one "v1," entry equal, compared in constant time, to the HMAC of
// the body under secret. Entries of other versions (such as "v1a") are
// skipped. body must be the raw bytes received, not JSON parsed and
// re-encoded.
func Verify(secret string, headers http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := DecodeSecret(secret)
	if err != nil {
		return err
	}
	id, ts, sigs := headers.Get(HeaderID), headers.Get(HeaderTimestamp), headers.Get(HeaderSignature)
	for _, h := range [...][2]string{{HeaderID, id}, {HeaderTimestamp, ts}, {HeaderSignature, sigs}} {
		if h[1] == "" {
			return fmt.Errorf("%w %s", ErrMissingHeader, h[0])
		}
	}
	if err := checkTimestamp(ts, now, tolerance); err != nil {
		return err
	}
	want := mac(key, id, ts, body)
	for _, entry := range strings.Fields(sigs) {
		version, b64, ok := strings.Cut(entry, ",")
		if !ok || version != signatureVersion {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("%w the body under this secret", ErrNoMatch)
}

// checkTimestamp parses a webhook-timestamp (unix seconds) and refuses it
// when it is more than tolerance away from now.
func checkTimestamp(ts string, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q is not an integer count of unix seconds", ErrTimestamp, ts)
	}
	at := time.Unix(sec, 0)
	if d := now.Sub(at); d > tolerance {
		return fmt.Errorf("%w: %s old, the tolerance is %s", ErrTimestamp, d.Truncate(time.Second), tolerance)
	} else if -d > tolerance {
		return fmt.Errorf("%w: %s in the future, the tolerance is %s", ErrTimestamp, (-d).Truncate(time.Second), tolerance)
	}
	return nil
}
