package httpapi

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/yamlstrict"
)

type yamlNode = yaml.Node

// minTokenLen is the shortest secret a tokens file's token may have.
const minTokenLen = 16

// maxTokenFile bounds what is read of a token's file or of the tokens file.
const maxTokenFile = 64 << 10

// LoadTokensFile reads the tokens file at path (HERALD_TOKENS_FILE):
//
//	tokens:
//	  - name: grafana
//	    scopes: [send]
//	    file: /run/secrets/grafana-token   # a file holding the secret
//	  - name: oncall
//	    scopes: [send, operate]
//	    sha256: 9f86d081884c7d65...         # or the secret's SHA-256, in hex
//	    paid: true                           # may spend the bot's Stars (default false)
//	    quotas:                              # optional; docs/QUOTAS.md
//	      queued_messages: 20000
//
// A relative file is read from the tokens file's folder. Every mistake is
// reported at once, as file:line:column; no error holds a secret.
func LoadTokensFile(path string) ([]Token, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	dir := filepath.Dir(path)
	return parseTokens(data, path, func(p string) (string, error) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		b, err := readLimited(p)
		return strings.TrimSpace(string(b)), err
	})
}

// tokenKeys are the keys of one entry of a tokens file.
var tokenKeys = []string{"name", "scopes", "file", "sha256", "quotas", "paid"}

// parseTokens reads a tokens file's content (named file in errors);
// readSecret returns the trimmed content of an entry's file.
func parseTokens(data []byte, file string, readSecret func(string) (string, error)) ([]Token, error) {
	var w yamlstrict.Walker
	root := w.Document(data, "add a tokens: list")
	list := w.Mapping(root, "", []string{"tokens"})["tokens"]
	var tokens []Token
	for i, item := range w.List(list.Value, list.Path) {
		path := yamlstrict.Index(list.Path, i)
		if t, ok := parseToken(&w, item, path, readSecret); ok {
			tokens = append(tokens, t)
		}
	}
	if err := w.Err(file); err != nil {
		return nil, err
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%s: tokens: the list is empty; add a token, or unset HERALD_TOKENS_FILE", file)
	}
	return tokens, nil
}

// parseToken reads one entry; false when it has a problem (recorded on w).
func parseToken(w *yamlstrict.Walker, item *yamlNode, path string, readSecret func(string) (string, error)) (Token, bool) {
	m := w.Mapping(item, path, tokenKeys)
	name, _ := w.String(m["name"].Value, m["name"].Path)
	if !isTokenName(name) {
		w.Report(orNode(m["name"].Value, item), yamlstrict.Join(path, "name"),
			fmt.Sprintf("%q is not a token name", name), "use 1 to 32 of a-z, 0-9, _ and -, such as grafana")
	}
	scopes, ok := parseScopes(w, m["scopes"], item, path)
	secret, hashed, okSecret := parseSecret(w, m, item, path, readSecret)
	limits := parseQuotas(w, m["quotas"])
	var paid bool
	if f := m["paid"]; f.Value != nil {
		paid, _ = w.Bool(f.Value, f.Path)
	}
	if !ok || !okSecret || w.Failed() {
		return Token{}, false
	}
	t := newHashedToken(name, hashed, scopes...)
	if secret != "" {
		t = NewToken(name, secret, scopes...)
	}
	t.Quotas, t.Paid = limits, paid
	return t, true
}

// parseScopes reads an entry's scopes: a name or a list of names.
func parseScopes(w *yamlstrict.Walker, f yamlstrict.Field, item *yamlNode, path string) ([]Scope, bool) {
	var scopes []Scope
	for i, n := range w.OneOrList(f.Value, f.Path) {
		s, _ := w.String(n, yamlstrict.Index(f.Path, i))
		sc, err := parseScope(s)
		if err != nil {
			w.Report(n, yamlstrict.Index(f.Path, i), fmt.Sprintf("%q is not a scope", s), "use "+scopeNames(AllScopes))
			continue
		}
		scopes = append(scopes, sc)
	}
	if len(scopes) == 0 {
		w.Report(orNode(f.Value, item), yamlstrict.Join(path, "scopes"), "no scope is given",
			"list what the token may do, such as scopes: [send]")
		return nil, false
	}
	return scopes, true
}

// parseSecret reads an entry's file or sha256, exactly one of which it
// needs.
func parseSecret(w *yamlstrict.Walker, m map[string]yamlstrict.Field, item *yamlNode, path string,
	readSecret func(string) (string, error)) (secret string, sum [32]byte, ok bool) {
	file, hasFile := w.String(m["file"].Value, m["file"].Path)
	digest, hasDigest := w.String(m["sha256"].Value, m["sha256"].Path)
	switch {
	case hasFile && hasDigest:
		w.Report(m["sha256"].Value, m["sha256"].Path, "file and sha256 are both given", "keep one")
	case hasFile:
		s, err := readSecret(file)
		switch {
		case err != nil:
			w.Report(m["file"].Value, m["file"].Path, err.Error(), "fix the path or the file's permissions")
		case len(s) < minTokenLen:
			w.Report(m["file"].Value, m["file"].Path, fmt.Sprintf("the token in %q is shorter than %d characters", file, minTokenLen),
				"generate one with openssl rand -hex 32")
		default:
			return s, sum, true
		}
	case hasDigest:
		b, err := hex.DecodeString(strings.TrimSpace(digest))
		if err != nil || len(b) != len(sum) {
			w.Report(m["sha256"].Value, m["sha256"].Path, "is not a SHA-256 digest in hex (64 digits)",
				"write the output of printf %s \"$TOKEN\" | sha256sum")
			break
		}
		copy(sum[:], b)
		return "", sum, true
	default:
		w.Report(item, path, "the token has neither file nor sha256", "add file: with the path of a file holding the token, or sha256: with its digest")
	}
	return "", sum, false
}

// readLimited reads a file of at most maxTokenFile bytes. Its errors name
// the path, never the content.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %q: %w", path, unwrapPath(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("cannot read %q: %w", path, unwrapPath(err))
	case len(b) > maxTokenFile:
		return nil, fmt.Errorf("%q is larger than %d bytes", path, maxTokenFile)
	}
	return b, nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// orNode is n, or fallback when the file left n out (to report at).
func orNode(n, fallback *yamlNode) *yamlNode {
	if n == nil {
		return fallback
	}
	return n
}
