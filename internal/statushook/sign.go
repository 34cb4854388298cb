package statushook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// signatureVersion identifies a symmetric (HMAC-SHA256) signature in the
// webhook-signature header: "v1,<base64>".
const signatureVersion = "v1"

// ErrMessageID is wrapped when a webhook-id cannot be signed safely.
var ErrMessageID = errors.New("webhook-id")

// Sign returns the value of the webhook-signature header for one delivery
// attempt: for each secret, in order, "v1," and the base64 HMAC-SHA256 of
// "{id}.{unix seconds of at}.{body}", separated by single spaces. Several
// secrets let an endpoint rotate its secret: the receiver accepts any one
// that matches. id must be non-empty and, as the specification asks, must
// not contain a '.', nor whitespace.
func Sign(id string, at time.Time, body []byte, secrets ...string) (string, error) {
	if err := checkID(id); err != nil {
		return "", err
	}
	if len(secrets) == 0 {
		return "", fmt.Errorf("%w: no secret to sign with", ErrSecret)
	}
	ts := strconv.FormatInt(at.Unix(), 10)
	sigs := make([]string, 0, len(secrets))
	for i, s := range secrets {
		key, err := DecodeSecret(s)
		if err != nil {
			return "", fmt.Errorf("secret %d of %d: %w", i+1, len(secrets), err)
		}
		sigs = append(sigs, signatureVersion+","+base64.StdEncoding.EncodeToString(mac(key, id, ts, body)))
	}
	return strings.Join(sigs, " "), nil
}

// Headers returns the three Standard Webhooks headers for one delivery
// attempt: webhook-id (stable across the attempts of one event),
// webhook-timestamp (at, the attempt's time, in unix seconds) and
// webhook-signature (see Sign).
func Headers(id string, at time.Time, body []byte, secrets ...string) (http.Header, error) {
	sig, err := Sign(id, at, body, secrets...)
	if err != nil {
		return nil, err
	}
	h := make(http.Header, 3)
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return h, nil
}

// mac is HMAC-SHA256(key, id "." ts "." body).
func mac(key []byte, id, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// checkID refuses ids that would make the signed content ambiguous or the
// header malformed.
func checkID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrMessageID)
	case strings.ContainsAny(id, ". \t\r\n"):
		return fmt.Errorf("%w: %q contains a '.' or whitespace", ErrMessageID, id)
	}
	return nil
}
