# Mink: `make dev` runs the demo, `make test` runs the tests.
# Both install what is missing: PostgreSQL from Debian's packages (its
# binaries only; Mink starts throwaway clusters) and the Go modules;
# `make test` also Node.js and npm from Debian's packages (the e2e tests
# read tables with a second Iceberg reader, icebird, an npm package) and
# Chromium (the console test drives /ui in headless Chromium).
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(HOME)/go/bin:$(PATH)
GO ?= go
# How long `make soak` runs (random crashes, joins, stops and pauses under
# continuous produce; the table is checked exact at the end).
DURATION ?= 2m

.PHONY: all build deps dev test test-race vet lint clean soak bench fuzz compat

all: build

deps:
	@scripts/ensure-postgres
	@$(GO) mod download

build: deps
	$(GO) build -o bin/mink ./cmd/mink

dev: build
	./bin/mink dev $(ARGS)

# One throwaway PostgreSQL for the whole run; each test gets its own schema.
test: deps
	@scripts/ensure-node
	@scripts/ensure-chromium
	$(GO) vet ./...
	MINK_TEST_CHROMIUM=1 $(GO) run ./internal/pgtest/withpg -- bash -c '$(GO) test -count=1 -timeout 15m ./... && $(GO) test -count=1 -race -timeout 10m ./cluster/ ./objects/ ./catalog/ ./admin/ ./tail/ ./commit/ ./rangefile/ ./indexer/ ./writer/ ./schemas/ ./auth/ ./ui/'

# Random crashes, clean stops, pauses and joins of `mink serve` processes
# under continuous produce, then an exactness check (e2e TestFailoverSoak).
# MINK_SOAK_SEED=N replays a run.
DURATION ?= 2m
soak: deps
	$(GO) run ./internal/pgtest/withpg -- bash -c 'MINK_SOAK_DURATION=$(DURATION) $(GO) test -count=1 -v -run TestFailoverSoak -timeout 2h ./e2e/'

# Every Go fuzz target (scripts/fuzz), one at a time, each for FUZZTIME;
# a crash fails and leaves its input in the package's testdata/fuzz/.
FUZZTIME ?= 20s
fuzz: deps
	$(GO) run ./internal/pgtest/withpg -- env FUZZTIME=$(FUZZTIME) scripts/fuzz

# The compatibility suite (package compat): a real Apache Kafka from Maven
# Central's jars, librdkafka producers and consumers, and the engines
# (PyIceberg, DuckDB, Spark, Trino) from PyPI and Maven Central, each
# installed into the user's cache on first use (scripts/ensure-python,
# scripts/ensure-maven). Prints the matrix, also kept in MATRIX.
MATRIX ?= bin/compat-matrix.md
compat: deps
	@scripts/ensure-python >/dev/null
	@mkdir -p $(dir $(MATRIX)) && rm -f $(MATRIX)
	@$(GO) run ./internal/pgtest/withpg -- env MINK_COMPAT=1 MINK_COMPAT_MATRIX=$(abspath $(MATRIX)) \
		$(GO) test -count=1 -timeout 40m ./internal/realkafka/ ./compat/; s=$$?; cat $(MATRIX) 2>/dev/null; exit $$s

lint:
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

clean:
	rm -rf bin

# Benchmarks, not part of `make test`: writes bench/RESULTS.md (medians of
# several runs, with references). SCENARIO=name runs one scenario alone;
# BENCHARGS passes flags (-runs N, -quick, -out FILE).
bench: deps
	$(GO) run ./bench $(if $(SCENARIO),-run '$(SCENARIO)') $(BENCHARGS)
