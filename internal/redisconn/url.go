package redisconn

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/herald-dev/herald/internal/config"
)

// redisForms lists the accepted URL shapes for error messages.
const redisForms = "redis://[user:pass@]host:port/db, rediss://[user:pass@]host:port/db (TLS), " +
	"redis-sentinel://[:pass@]host1:port,host2:port/db?master=NAME, redis-cluster://[user:pass@]host1:port,host2:port " +
	"(rediss-cluster:// for TLS) or redis-socket:///path/to/redis.sock?db=N"

// target is a parsed Redis URL from which both client option types are
// built, so Herald's own client and asynq always agree.
type target struct {
	network          string   // "tcp" or "unix"
	addrs            []string // one address, or the sentinel list
	username         string
	password         string
	sentinelUsername string
	sentinelPassword string
	master           string
	db               int
	tlsServerName    string // non-empty for rediss:// and rediss-cluster://
	cluster          bool   // Redis Cluster seed nodes in addrs
}

// tlsConfig returns a fresh TLS configuration for rediss://, or nil.
func (t target) tlsConfig() *tls.Config {
	if t.tlsServerName == "" {
		return nil
	}
	return &tls.Config{ServerName: t.tlsServerName, MinVersion: tls.VersionTLS12}
}

// parse parses URL, wrapping any problem in a FieldError for REDIS_URL.
func (c Config) parse() (target, error) {
	t, err := parseTarget(c.URL)
	if err != nil {
		return target{}, config.FieldErr(EnvURL, "%v", err)
	}
	return t, nil
}

// parseTarget understands the URL forms the package documentation lists. Its errors show the URL only
// in redacted form and never wrap net/url errors, which quote the input.
func parseTarget(raw string) (target, error) {
	shown := redactURL(raw)
	if strings.TrimSpace(raw) == "" {
		return target{}, fmt.Errorf("is empty; use one of %s", redisForms)
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		hint := ""
		if !strings.ContainsAny(raw, "/?#") && strings.Contains(raw, ":") {
			hint = fmt.Sprintf(" (did you mean %q?)", "redis://"+shown+"/0")
		}
		return target{}, fmt.Errorf("%q has no scheme%s; use one of %s", shown, hint, redisForms)
	}
	switch strings.ToLower(scheme) {
	case "redis", "rediss":
		return parseTCP(raw, strings.ToLower(scheme) == "rediss", shown)
	case "redis-sentinel":
		return parseSentinel(rest, shown)
	case "redis-socket":
		return parseSocket(raw, shown)
	case "redis-cluster", "rediss-cluster":
		return parseCluster(rest, strings.ToLower(scheme) == "rediss-cluster", shown)
	default:
		return target{}, fmt.Errorf("%q has unsupported scheme %q; accepted schemes are redis://, rediss://, redis-sentinel://, redis-cluster://, rediss-cluster:// and redis-socket:// (%s)",
			shown, scheme, redisForms)
	}
}

// parseURL wraps url.Parse without leaking the input: the underlying reason
// is only shown when the URL carries no credentials.
func urlParse(raw, shown string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		reason := ""
		var ue *url.Error
		if !strings.Contains(raw, "@") && errors.As(err, &ue) {
			reason = ": " + ue.Err.Error()
		}
		return nil, fmt.Errorf("%q is not a valid URL%s; use one of %s", shown, reason, redisForms)
	}
	return u, nil
}

// parseTCP handles redis:// and rediss://.
func parseTCP(raw string, useTLS bool, shown string) (target, error) {
	u, err := urlParse(raw, shown)
	if err != nil {
		return target{}, err
	}
	if err := onlyQuery(u.Query(), shown); err != nil {
		return target{}, err
	}
	addr, err := hostPort(u.Host, "6379", shown)
	if err != nil {
		return target{}, err
	}
	db, err := pathDB(u.Path, shown)
	if err != nil {
		return target{}, err
	}
	t := target{network: "tcp", addrs: []string{addr}, db: db}
	t.username, t.password = userPass(u.User)
	if useTLS {
		t.tlsServerName = u.Hostname()
	}
	return t, nil
}

// splitHostList splits the part after "scheme://" of a URL with a
// comma-separated host list into its user info (with the trailing "@"), the
// hosts and the rest (path, query). It is done by hand because net/url does
// not accept a host list with IPv6 literals.
func splitHostList(rest string) (userinfo, hosts, tail string) {
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	hosts = authority
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		userinfo, hosts = authority[:at+1], authority[at+1:]
	}
	return userinfo, hosts, tail
}

// parseHostList parses "host[:port],host[:port]" with defPort for hosts
// that name none.
func parseHostList(hosts, defPort, shown string) ([]string, error) {
	var addrs []string
	for h := range strings.SplitSeq(hosts, ",") {
		addr, err := hostPort(strings.TrimSpace(h), defPort, shown)
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, addr)
	}
	return addrs, nil
}

// parseCluster reads redis-cluster://[user:pass@]host1:port,host2:port:
// seed nodes of a Redis Cluster. A cluster has only database 0, so a path
// other than "" or "/0" is refused.
func parseCluster(rest string, useTLS bool, shown string) (target, error) {
	userinfo, hosts, tail := splitHostList(rest)
	u, err := urlParse("redis-cluster://"+userinfo+"cluster"+tail, shown)
	if err != nil {
		return target{}, err
	}
	if err := onlyQuery(u.Query(), shown); err != nil {
		return target{}, err
	}
	if p := strings.TrimPrefix(u.Path, "/"); p != "" && p != "0" {
		return target{}, fmt.Errorf("%q selects database %q; a Redis Cluster has only database 0", shown, p)
	}
	t := target{network: "tcp", cluster: true}
	t.username, t.password = userPass(u.User)
	if t.addrs, err = parseHostList(hosts, "6379", shown); err != nil {
		return target{}, err
	}
	if useTLS {
		t.tlsServerName, _, _ = net.SplitHostPort(t.addrs[0])
	}
	return t, nil
}

// parseSentinel handles redis-sentinel://.
func parseSentinel(rest, shown string) (target, error) {
	userinfo, hosts, tail := splitHostList(rest)
	u, err := urlParse("redis-sentinel://"+userinfo+"sentinel"+tail, shown)
	if err != nil {
		return target{}, err
	}
	q := u.Query()
	if err := onlyQuery(q, shown, "master", "username", "password"); err != nil {
		return target{}, err
	}
	t := target{network: "tcp", master: q.Get("master"), username: q.Get("username"), password: q.Get("password")}
	if t.master == "" {
		return target{}, fmt.Errorf("%q names no master; add ?master=NAME (the name the sentinels monitor, often \"mymaster\")", shown)
	}
	if t.addrs, err = parseHostList(hosts, "26379", shown); err != nil {
		return target{}, err
	}
	if t.db, err = pathDB(u.Path, shown); err != nil {
		return target{}, err
	}
	t.sentinelUsername, t.sentinelPassword = userPass(u.User)
	return t, nil
}

// parseSocket handles redis-socket:///path?db=N.
func parseSocket(raw, shown string) (target, error) {
	u, err := urlParse(raw, shown)
	if err != nil {
		return target{}, err
	}
	if u.Host != "" {
		return target{}, fmt.Errorf("%q has a host; a socket URL needs an absolute path, e.g. redis-socket:///run/redis/redis.sock", shown)
	}
	if !strings.HasPrefix(u.Path, "/") || len(u.Path) < 2 || strings.HasSuffix(u.Path, "/") {
		return target{}, fmt.Errorf("%q has no socket path; use e.g. redis-socket:///run/redis/redis.sock", shown)
	}
	q := u.Query()
	if err := onlyQuery(q, shown, "db"); err != nil {
		return target{}, err
	}
	t := target{network: "unix", addrs: []string{u.Path}}
	if v := q.Get("db"); v != "" {
		if t.db, err = strconv.Atoi(v); err != nil || t.db < 0 {
			return target{}, fmt.Errorf("%q has db=%q; it must be a database number >= 0", shown, v)
		}
	}
	t.username, t.password = userPass(u.User)
	return t, nil
}

// userPass extracts the decoded user name and password.
func userPass(ui *url.Userinfo) (string, string) {
	if ui == nil {
		return "", ""
	}
	pass, _ := ui.Password()
	return ui.Username(), pass
}

// onlyQuery rejects query parameters other than the allowed ones, so that a
// typo does not silently fall back to a default.
func onlyQuery(q url.Values, shown string, allowed ...string) error {
	for k := range q {
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return fmt.Errorf("%q has query parameter %q; this scheme takes none", shown, k)
			}
			return fmt.Errorf("%q has unknown query parameter %q; accepted: %s", shown, k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// hostPort checks a host[:port] and adds defPort when the port is missing.
func hostPort(h, defPort, shown string) (string, error) {
	if h == "" {
		return "", fmt.Errorf("%q has no host; use e.g. redis://127.0.0.1:6379/0", shown)
	}
	host, port := h, defPort
	switch {
	case strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]"):
		host = h[1 : len(h)-1]
	case strings.Count(h, ":") == 0:
	default:
		var err error
		if host, port, err = net.SplitHostPort(h); err != nil {
			return "", fmt.Errorf("%q has a malformed host:port %q; IPv6 addresses need brackets, e.g. [::1]:6379", shown, h)
		}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("%q has port %q; it must be a number from 1 to 65535", shown, port)
	}
	if host == "" {
		return "", fmt.Errorf("%q has no host before :%s; use e.g. 127.0.0.1:%s", shown, port, port)
	}
	return net.JoinHostPort(host, port), nil
}

// pathDB reads the database number from a "/N" path; an empty path is 0.
func pathDB(path, shown string) (int, error) {
	p := strings.TrimPrefix(path, "/")
	if p == "" {
		return 0, nil
	}
	db, err := strconv.Atoi(p)
	if err != nil || db < 0 {
		return 0, fmt.Errorf("%q has path %q; the path must be the database number, e.g. /0", shown, path)
	}
	return db, nil
}
