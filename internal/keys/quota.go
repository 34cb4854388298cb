package keys

// TokenQuota is the hash that counts what the API token named token has
// queued and done recently (internal/quota): one field per quota and time
// bucket. Each token's keys carry a hash tag of their own, so a Redis
// Cluster spreads the tokens over its nodes and each token's check is one
// script on one node.
func TokenQuota(token string) string { return "herald:{tok:" + token + "}:quota" }

// TokenAudiences is the sorted set of the audiences (internal/broadcast)
// the token named token keeps, each scored by when it expires (Unix
// seconds).
func TokenAudiences(token string) string { return "herald:{tok:" + token + "}:audiences" }
