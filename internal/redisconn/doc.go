// Package redisconn builds every Redis client Herald makes, from one
// setting: REDIS_URL, with HERALD_REDIS_WAIT_REPLICAS and
// HERALD_REDIS_WAIT_TIMEOUT for durable acknowledgements.
//
// A Config says where the queues live and how much replication an
// acknowledgement needs. Config.NewClient is the one constructor of
// Herald's own go-redis clients; Config.AsynqConnOpt hands the same
// constructor to the asynq clients Herald does not build itself (the
// inspector, the web UI), and Config.ConnOpt and Config.UniversalOptions
// give the plain options of the same server, so that every client reaches
// the same server with the same credentials and database.
//
// REDIS_URL takes one of these forms:
//
//	redis://[user:pass@]host[:port][/db]             plain TCP, port 6379 by default
//	rediss://[user:pass@]host[:port][/db]            TCP with TLS
//	redis-sentinel://[:pass@]host1:port,host2:port[/db]?master=NAME[&username=U&password=P]
//	redis-socket://[:pass@]/path/to/redis.sock[?db=N]
//	redis-cluster://[user:pass@]host1:port,host2:port  Redis Cluster seed nodes (rediss-cluster:// for TLS)
//
// The clients follow a failover by themselves: a Sentinel client asks the
// sentinels for the master at every new connection and drops a connection
// that answers READONLY; a cluster client reloads its slot map every
// ClusterReloadInterval while in use and at once when a node refuses a
// connection or answers READONLY, CLUSTERDOWN or MASTERDOWN; and the read
// timeout exceeds the wait timeout, so that a WAIT is never cut short.
// When the server Herald writes to is a replica after all,
// Config.ReplicaHint says what to change, in the terms of the URL's form.
//
// Config.Durable is the internal/durable configuration the wait settings
// ask for. Passwords never appear in errors, String, LogValue or Redacted.
package redisconn
