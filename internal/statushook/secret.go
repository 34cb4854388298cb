package statushook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// SecretPrefix starts every serialized signing secret, as the Standard
// Webhooks specification asks, so that a secret is recognised on sight.
const SecretPrefix = "whsec_"

// Secret key sizes the Standard Webhooks specification allows for
// HMAC-SHA256 secrets: at least 24 bytes (192 bits), at most 64 (512 bits).
const (
	minSecretBytes = 24
	maxSecretBytes = 64
)

// generatedSecretBytes is the size of the keys NewSecret makes.
const generatedSecretBytes = 32

// ErrSecret is wrapped by every error about a malformed signing secret.
var ErrSecret = errors.New("signing secret")

// NewSecret returns a fresh random signing secret, "whsec_" followed by the
// standard base64 of 32 random bytes.
func NewSecret() (string, error) {
	key := make([]byte, generatedSecretBytes)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("%w: reading random bytes: %v", ErrSecret, err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// DecodeSecret returns the HMAC key a serialized secret stands for: the
// base64 after the "whsec_" prefix. The prefix is required (a bare base64
// string is refused, so that a secret of the wrong kind is not silently
// used), and the key must be 24 to 64 bytes long. The error never contains
// the secret.
func DecodeSecret(secret string) ([]byte, error) {
	b64, ok := strings.CutPrefix(strings.TrimSpace(secret), SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: does not start with %q", ErrSecret, SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("%w: the part after %q is not standard base64", ErrSecret, SecretPrefix)
	}
	if len(key) < minSecretBytes || len(key) > maxSecretBytes {
		return nil, fmt.Errorf("%w: key is %d bytes, the specification allows %d to %d",
			ErrSecret, len(key), minSecretBytes, maxSecretBytes)
	}
	return key, nil
}
