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

// missingSignature is the 401 for a request without its signature header.
func missingSignature(header, fix string) *httpapi.Error {
	return httpapi.Errorf(http.StatusUnauthorized, httpapi.CodeBadSignature, "missing %s header: %s", header, fix)
}

// wrongSignature is the 401 for a signature that does not match the body.
func wrongSignature(header, fix string) *httpapi.Error {
	return httpapi.Errorf(http.StatusUnauthorized, httpapi.CodeBadSignature,
		"%s does not match the body: %s", header, fix)
}
