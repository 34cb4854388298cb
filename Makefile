# Herald developer tasks. `make help` lists them.
.DEFAULT_GOAL := help
GO ?= go

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## Run everything in one process (in-memory Redis, fake Telegram)
	$(GO) run ./cmd/herald

.PHONY: build
build: ## Build the producer and worker binaries into ./bin
	CGO_ENABLED=0 $(GO) build -o bin/ ./cmd/producer ./cmd/worker ./cmd/herald

.PHONY: test
test: ## Run the tests (the README's command)
	$(GO) test -p 1 ./...

.PHONY: test-race
test-race: ## Run the tests with the race detector
	$(GO) test -race -p 1 ./...

.PHONY: lint
lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# BENCH_SCENARIOS picks the scenarios of `make bench` and BENCH_FLAGS adds
# flags, e.g. make bench BENCH_SCENARIOS=PAID,CEILING BENCH_FLAGS="-scales 1"
# (paid broadcasts at 1000/s, and Herald's own ceiling; see bench/main.go).
BENCH_SCENARIOS ?= S1,S2,S5,PAUSED,S2-429,S3,idle,S4,BOTS3
BENCH_FLAGS ?=
.PHONY: bench
bench: ## Burst benchmark: S1, S2, S5, PAUSED, S2-429, S3, idle, S4 (digests) and BOTS3 (3 bots), 1 and 3 workers, 10x and real time; BENCH_SCENARIOS=PAID,CEILING for paid broadcasts and the ceiling
	$(GO) run ./bench burst -scenarios $(BENCH_SCENARIOS) $(BENCH_FLAGS)

.PHONY: bench-quick
bench-quick: ## Burst benchmark at 10x Telegram time only
	$(GO) run ./bench burst -scales 10

# govulncheck runs offline: the vulnerability database is built from the
# golang.org/x/vulndb module (served by the Go module proxy) instead of being
# fetched from vuln.go.dev. Bump VULNDB_VERSION to the newest pseudo-version.
#
# The standard library is checked at the version of go.mod's toolchain line:
# GOTOOLCHAIN=auto overrides a machine-wide GOTOOLCHAIN=local, so the go
# command fetches that toolchain from the module proxy (about 300 MB, a few
# seconds) when the installed one is older. Any finding fails the target.
VULNDB_VERSION ?= v0.0.0-20261105234957-e22db6528018
VULNDB_DIR ?= $(CURDIR)/.cache/vulndb
VULN_TOOLCHAIN ?= auto
.PHONY: vuln
vuln: ## govulncheck ./... against a vulnerability database built from golang.org/x/vulndb
	$(GO) mod download golang.org/x/vulndb@$(VULNDB_VERSION)
	rm -rf $(VULNDB_DIR)
	GOFLAGS=-mod=mod $(GO) run golang.org/x/vulndb/cmd/indexdb@$(VULNDB_VERSION) \
		-vulns $$($(GO) env GOMODCACHE)/golang.org/x/vulndb@$(VULNDB_VERSION)/data/osv -out $(VULNDB_DIR)
	@echo "govulncheck with $$(GOTOOLCHAIN=$(VULN_TOOLCHAIN) $(GO) env GOVERSION)"
	GOTOOLCHAIN=$(VULN_TOOLCHAIN) GOFLAGS=-mod=mod $(GO) run golang.org/x/vuln/cmd/govulncheck@v1.9.0 -db file://$(VULNDB_DIR) ./...

FUZZTIME ?= 20s
.PHONY: fuzz
fuzz: ## Run every fuzz target in the module for FUZZTIME (default 20s)
	HERALD_FUZZ_TIME=$(FUZZTIME) $(GO) test ./test/fuzzing -run TestFuzzTargets -v -timeout 0
