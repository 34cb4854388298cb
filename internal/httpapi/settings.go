package httpapi

import (
	"fmt"

	"github.com/herald-dev/herald/internal/config"
)

// The keyring's settings: the API's tokens.
const (
	EnvAPIToken       = "HERALD_API_TOKEN"
	EnvAPITokenFile   = "HERALD_API_TOKEN_FILE"
	EnvAuthDisabled   = "HERALD_AUTH_DISABLED"
	EnvTokensFile     = "HERALD_TOKENS_FILE"
	EnvAdminToken     = "HERALD_ADMIN_TOKEN"
	EnvAdminTokenFile = "HERALD_ADMIN_TOKEN_FILE"
)

// KeyringConfig names the API's tokens; Build turns it into a Keyring.
type KeyringConfig struct {
	// APIToken is the bearer token of senders, named "api" with the send
	// scope (HERALD_API_TOKEN).
	APIToken string
	// APITokenFile is a file holding the API token, trimmed
	// (HERALD_API_TOKEN_FILE); it excludes APIToken.
	APITokenFile string
	// TokensFile is a YAML file of named tokens, each with its scopes
	// (HERALD_TOKENS_FILE; format in docs/SECURITY.md), beside or instead
	// of APIToken and AdminToken.
	TokensFile string
	// AuthDisabled turns authentication off, for local use only
	// (HERALD_AUTH_DISABLED): Build returns OpenKeyring.
	AuthDisabled bool
	// AdminToken is the token with every scope, named "admin"
	// (HERALD_ADMIN_TOKEN or HERALD_ADMIN_TOKEN_FILE): silences and the web
	// UI's changes among them. The API token only sends and reads the UI.
	AdminToken, AdminTokenFile string
}

// AuthSpecs binds the API token, the tokens file and the switch that turns
// authentication off to c, in documentation order.
func (c *KeyringConfig) AuthSpecs() []config.Spec {
	return []config.Spec{
		config.SecretSpec(EnvAPIToken, `Bearer token of senders: the token named "api", with the send scope. Prefer the _FILE variant.`, config.StringVar(&c.APIToken)),
		config.NewSpec(EnvAPITokenFile, "", "File holding the API token (content trimmed); excludes "+EnvAPIToken+".",
			config.StringVar(&c.APITokenFile)),
		config.NewSpec(EnvTokensFile, "", "YAML file of named tokens with their scopes (send, operate, admin); see docs/SECURITY.md.",
			config.StringVar(&c.TokensFile)),
		config.NewSpec(EnvAuthDisabled, "false", "Accept requests without a token; for local use only.", config.BoolVar(&c.AuthDisabled)),
	}
}

// AdminSpecs binds the admin token to c.
func (c *KeyringConfig) AdminSpecs() []config.Spec {
	return []config.Spec{
		config.SecretSpec(EnvAdminToken, `Token with every scope, named "admin": silences, and the web UI's changes (pause queues, run, archive, delete tasks). `+
			"The API token only sends and reads the UI. Prefer the _FILE variant.",
			config.StringVar(&c.AdminToken)),
		config.NewSpec(EnvAdminTokenFile, "", "File holding the admin token (content trimmed); excludes "+EnvAdminToken+".",
			config.StringVar(&c.AdminTokenFile)),
	}
}

// Specs binds every keyring setting to c.
func (c *KeyringConfig) Specs() []config.Spec { return append(c.AuthSpecs(), c.AdminSpecs()...) }

// Check reports every problem of the keyring's settings by their names.
func (c KeyringConfig) Check(p *config.Problems) {
	config.ValidateSecretPair(p, c.APIToken, c.APITokenFile, EnvAPIToken, EnvAPITokenFile)
	config.ValidateSecretPair(p, c.AdminToken, c.AdminTokenFile, EnvAdminToken, EnvAdminTokenFile)
	if c.AdminToken != "" && c.AdminToken == c.APIToken {
		p.Add(EnvAdminToken, "%s", adminIsAPI)
	}
}

// CheckServe adds the rule only serving the API needs: some token, or
// authentication turned off.
func (c KeyringConfig) CheckServe(p *config.Problems) {
	if !c.AuthDisabled && c.APIToken == "" && c.APITokenFile == "" && c.TokensFile == "" {
		p.Add(EnvAPIToken, "is required: set %s (or %s, or a tokens file in %s), or %s=true for local use",
			EnvAPIToken, EnvAPITokenFile, EnvTokensFile, EnvAuthDisabled)
	}
}

// adminIsAPI is the problem of an admin token equal to the API token.
const adminIsAPI = "must differ from " + EnvAPIToken + ": every sender holds the API token; generate a second secret for the web UI's admin"

// Token returns the API token, reading APITokenFile when it is set; "" and
// no error when neither is set.
func (c KeyringConfig) Token() (string, error) {
	return config.SecretPair(c.APIToken, c.APITokenFile, EnvAPIToken, EnvAPITokenFile)
}

// Admin returns the admin token, reading AdminTokenFile when set; "" when
// neither is set. A token equal to the API token is an error.
func (c KeyringConfig) Admin() (string, error) {
	admin, err := config.SecretPair(c.AdminToken, c.AdminTokenFile, EnvAdminToken, EnvAdminTokenFile)
	if err != nil || admin == "" {
		return admin, err
	}
	if api, _ := c.Token(); api == admin {
		return "", config.FieldErr(EnvAdminToken, "%s", adminIsAPI)
	}
	return admin, nil
}

// Build makes the keyring: the API token as "api" with the send scope, the
// admin token as "admin" with every scope, and the entries of the tokens
// file. With AuthDisabled it is open.
func (c KeyringConfig) Build() (*Keyring, error) {
	if c.AuthDisabled {
		return OpenKeyring(), nil
	}
	var tokens []Token
	api, err := c.Token()
	if err != nil {
		return nil, err
	}
	if api != "" {
		tokens = append(tokens, NewToken("api", api, ScopeSend))
	}
	admin, err := c.Admin()
	if err != nil {
		return nil, err
	}
	if admin != "" {
		tokens = append(tokens, NewToken("admin", admin, AllScopes...))
	}
	if c.TokensFile != "" {
		more, err := LoadTokensFile(c.TokensFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvTokensFile, err)
		}
		tokens = append(tokens, more...)
	}
	k, err := NewKeyring(tokens...)
	if err != nil {
		return nil, fmt.Errorf("API tokens (%s, %s, %s): %w", EnvAPIToken, EnvAdminToken, EnvTokensFile, err)
	}
	return k, nil
}
