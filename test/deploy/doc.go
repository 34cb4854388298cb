// Package deploy has no code of its own. Its tests check the container
// deployment shipped at the repository root — Dockerfile, .dockerignore,
// docker-compose.yml, .env.example and deploy/prometheus.yml — against the
// binaries and the config package, without a Docker engine: the compose file
// is loaded with compose-go (the loader docker compose itself uses), the
// Dockerfile is read as text, and the binaries' subcommands are read from
// their Go source.
//
// What is checked: the services and their profiles, Redis's durability flags
// and volume, health checks that call the binaries' real `healthcheck`
// subcommand, a worker that can be scaled (replicas, no fixed name or port),
// start order on a healthy Redis, a stop grace period above the worker's
// shutdown timeout, restart policies, networks, that every environment
// variable named in the compose file or .env.example is one the binaries
// read, that no secret is written into a committed file, that each
// container mounts only its own secrets (the bot token only in the workers,
// the API and admin tokens only in the producer), that the tokens file
// recipe of docs/COMPOSE.md works, that Prometheus scrapes the ports the
// binaries listen on, and that every key of every compose file has a row in
// the Requirements table of docs/COMPOSE.md, whose newest release is the
// minimum Compose version that doc and the README state.
package deploy
