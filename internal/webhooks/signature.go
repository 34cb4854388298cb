package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/herald-dev/herald/internal/httpapi"
)

// signatureMatches reports whether the hex signature a sender presented is
// HMAC-SHA256(secret, parts...), comparing the digests in constant time.
func signatureMatches(presented, secret string, parts ...[]byte) bool {
	got, err := hex.DecodeString(strings.TrimSpace(presented))
	if err != nil || len(got) != sha256.Size {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	for _, p := range parts {
		mac.Write(p)
	}
	return hmac.Equal(got, mac.Sum(nil))
}

// wellFormed reports whether a presented signature can be an HMAC-SHA256
// at all (64 hex digits), so that a request with a malformed one is refused
// before its body is read.
func wellFormed(presented string) bool {
	b, err := hex.DecodeString(strings.TrimSpace(presented))
	return err == nil && len(b) == sha256.Size
}

// bodyDigest names a signed body in idempotency keys: the first 128 bits of
// its SHA-256, in hex. A captured delivery replayed with fresh unsigned
// headers (a new delivery or request id) carries the same body, so it maps
// to the same key and is stored once within the idempotency window.
func bodyDigest(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:16])
}

// missingSignature is the 401 for a request without its signature header.
func missingSignature(header, fix string) *httpapi.Error {
	return httpapi.Errorf(http.StatusUnauthorized, httpapi.CodeBadSignature, "missing %s header: %s", header, fix)
}

// wrongSignature is the 401 for a signature that does not match the body.
func wrongSignature(header, fix string) *httpapi.Error {
	return httpapi.Errorf(http.StatusUnauthorized, httpapi.CodeBadSignature,
		"%s does not match the body: %s", header, fix)
}
