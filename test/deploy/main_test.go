package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// placeholderSecrets holds a placeholder for each compose secret, standing
// in for /run/secrets when the tests load a service's settings.
var placeholderSecrets string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "herald-deploy-secrets-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	placeholderSecrets = dir
	for name, v := range map[string]string{secretBot: exampleBotTok, secretAPI: "placeholder-api-token", secretAdmin: "placeholder-admin-token"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
