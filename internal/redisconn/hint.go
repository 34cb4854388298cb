package redisconn

import "strconv"

// ReplicaHint says what to do when the server Herald writes to turns out
// to be a replica (READONLY, or ROLE answering "slave"), in the terms of
// URL's form. It holds no credentials.
func (c Config) ReplicaHint() string {
	t, err := c.parse()
	switch {
	case err != nil:
		return "fix " + EnvURL
	case t.cluster:
		return "the cluster is failing over; Herald reloads the slot map every second"
	case t.master != "":
		return "the sentinels still name a replica as master " + strconv.Quote(t.master) + " (a failover is under way); Herald asks them again at each new connection"
	}
	return EnvURL + " names one server, and that server is a replica (a failover demoted it, or the URL names a replica); " +
		"Herald writes only to the master: set " + EnvURL + " to redis-sentinel://HOST1:26379,HOST2:26379,HOST3:26379/0?master=NAME " +
		"so that Herald follows failovers, or to the current master's address"
}
