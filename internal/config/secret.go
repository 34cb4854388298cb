package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// maxSecretFile bounds how much of a token file is read.
const maxSecretFile = 64 << 10

// readSecretFile returns the trimmed content of a token file. Errors name the
// path and the reason but never include any of the content.
func readSecretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read %q: %v; fix the path or the file permissions", path, pathReason(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", fmt.Errorf("cannot read %q: %v; fix the path or the file permissions", path, pathReason(err))
	}
	if len(b) > maxSecretFile {
		return "", fmt.Errorf("file %q is larger than %d bytes; it must hold only the token", path, maxSecretFile)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("file %q is empty; write the token into it", path)
	}
	return s, nil
}

// pathReason strips the path from an fs.PathError, which the caller already
// quotes.
func pathReason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// SecretPair resolves a value that can be given directly or through a file.
// Neither set gives "" and no error.
func SecretPair(value, file, envValue, envFile string) (string, error) {
	switch {
	case value != "" && file != "":
		return "", bothSet(envValue, envFile)
	case file != "":
		s, err := readSecretFile(file)
		if err != nil {
			return "", FieldErr(envFile, "%v", err)
		}
		return s, nil
	default:
		return value, nil
	}
}

// bothSet is the error for two mutually exclusive settings.
func bothSet(envValue, envFile string) error {
	return FieldErr(envValue, "and %s are both set; keep only one", Ref(envFile))
}

// ValidateSecretPair records exclusivity and file problems without keeping
// the secret.
func ValidateSecretPair(p *Problems, value, file, envValue, envFile string) {
	if _, err := SecretPair(value, file, envValue, envFile); err != nil {
		*p = append(*p, err)
	}
}
