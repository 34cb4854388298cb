// Package durable makes Herald's acknowledgements survive a Redis failover.
//
// A master answers a write before its replicas have it. When the master
// then dies and Sentinel (or the Cluster) promotes a replica that had not
// caught up, the write is gone although Herald said it was stored. Acker
// closes that gap: before the producer answers 2xx, and before a worker
// counts a send as recorded, it waits until enough replicas of every node
// written to hold the write (Redis WAIT), and reports failure otherwise
// (the producer answers 503 and the client retries with the same
// Idempotency-Key; the worker retries).
//
// Which nodes were written is recorded in the request's context (Track,
// Wrote); on a single server or a Sentinel group there is one master and
// the keys do not matter. CheckPrimary and Watch tell when the server
// Herald writes to is a replica (a plain redis:// URL left on a demoted
// master), for /readyz and for one clear log line.
//
// What each setting guarantees is in docs/RELIABILITY.md ("Redis
// durability").
package durable
