# parastream: the two commands that work on a fresh machine with Go
# installed are `make demo` and `make test`.

GO          ?= go
BIN         ?= parastream
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# -s -w: no symbol table or DWARF (panics still print file:line); the
# binary is about a third smaller (docs/performance.md, "Build").
LDFLAGS     := -s -w -X main.version=$(VERSION)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
PKGS        := ./...
# Benchmarks to run; override with `make bench BENCH=Reddit`.
BENCH       ?= .

.PHONY: all build build-dataflow vet-dataflow test test-long demo demo-models bench bench-mem fmt vet lint clean interop fuzz parity parity-exact gpu-bundle

all: build

# The default build has Prism and the portable runner (Flink, Spark, any
# job server). Google Cloud Dataflow and the gs:// filesystem are behind the
# build tag dataflow: `make build-dataflow` (a larger binary, a slower build).
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/parastream

build-dataflow:
	$(GO) build -trimpath -tags dataflow -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/parastream

# Tests read ../shared/data when it is there and skip those parts with a
# message when it is not. The DuckDB interop test needs tools/interop's npm
# packages: `make interop` installs them when npm is available.
# `make test` runs go test -short: a test that skips itself under
# testing.Short() is a long one, and `make test-long` runs just those; CI
# runs both (scripts/gotest.sh). Each prints its slowest packages and time.
test: interop
	GO='$(GO)' PKGS='$(PKGS)' bash scripts/gotest.sh short

test-long: interop
	GO='$(GO)' PKGS='$(PKGS)' bash scripts/gotest.sh long

demo: build
	./$(BIN) demo --data testdata --out out/demo

# The research's three larger models (transformer, csae, edd), a few steps
# each on the demo's stream, evaluated (docs/models/).
demo-models: build
	./$(BIN) demo --models --data testdata --out out/demo-models

# After the Go benchmarks (their output kept in out/bench/go.txt), the
# training throughput of avg, lstmavg and gran beside PyTorch
# (scripts/train_bench.py) and the step cost against the vocabulary beside
# PyTorch's SparseAdam and Adam (scripts/vocab_bench.py, reading
# BenchmarkVocabScaling's figures from go.txt); both need Debian's
# python3-torch and are skipped without it; and the NMF comparison with scikit-learn: it needs a
# python3 with numpy, scipy and scikit-learn (Debian: python3-sklearn,
# python3-scipy; tried in PATH, then /usr/bin/python3) and is skipped, with a
# message, without one.
bench:
	@mkdir -p out/bench
	bash -c "set -o pipefail; $(GO) test -run '^\$$' -bench '$(BENCH)' -benchmem -count=1 -timeout 60m $(PKGS) | tee out/bench/go.txt"
	@py=""; for p in python3 /usr/bin/python3; do \
		if $$p -c 'import numpy, scipy, sklearn' >/dev/null 2>&1; then py=$$p; break; fi; \
	done; \
	if [ -n "$$py" ]; then $$py scripts/nmf_bench.py; \
	else echo "bench: no python3 with numpy, scipy and scikit-learn: skipping scripts/nmf_bench.py (apt-get install python3-sklearn python3-scipy)"; fi
	@if /usr/bin/python3 -c 'import torch' >/dev/null 2>&1; then /usr/bin/python3 scripts/train_bench.py; \
	else echo "bench: no /usr/bin/python3 with torch: skipping scripts/train_bench.py (apt-get install python3-torch)"; fi
	@if ! /usr/bin/python3 -c 'import torch' >/dev/null 2>&1; then echo "bench: no /usr/bin/python3 with torch: skipping scripts/vocab_bench.py"; \
	elif grep -q 'BenchmarkVocabScaling/vocab=' out/bench/go.txt; then /usr/bin/python3 scripts/vocab_bench.py --go-pairs out/bench/go.txt; \
	else echo "bench: BenchmarkVocabScaling did not run (BENCH=$(BENCH)): skipping scripts/vocab_bench.py"; fi

# The peak RSS of every long-running command beside the bytes it handles
# (issue 24): gen, extract, featurize, broker, publish, consume and eval
# watch on a generated Quora corpus of MEM_BENCH_ROWS rows (default 1M), and
# train of avg, lstmavg and gran at batch 100 and 1000 over two epochs of the
# Quora sample beside the PyTorch reference (scripts/parity.py; its column
# says "not installed" without Debian's python3-torch). Table in
# out/bench/mem.md and mem.json; settings in scripts/mem_bench.sh. Not part
# of `make bench` or `make test`: it takes about half an hour at 1M rows.
MEM_BENCH_ROWS ?= 1000000
bench-mem:
	MEM_BENCH_ROWS='$(MEM_BENCH_ROWS)' bash scripts/mem_bench.sh

# The GPU bundle (issue 15; docs/gpu.md, "Running on a GPU machine (the
# bundle)"): parastream, the test binaries of trainstep/cuda (its tests and
# BenchmarkGPUTrainStep) and trainstep (the checkpoint tests), all built
# with CGO_ENABLED=0, scripts/gpu_bench.py and train_bench.py, and the data
# they read, xz-compressed into GPU_BUNDLE_DIR with run.sh, the one command
# that runs them on a GPU machine with no Go. Settings in
# scripts/gpu_bundle/build.sh.
GPU_BUNDLE_DIR ?= out/gpu-bundle
gpu-bundle:
	GO='$(GO)' GPU_BUNDLE_DIR='$(GPU_BUNDLE_DIR)' bash scripts/gpu_bundle/build.sh

# The reference-parity harness (docs/trainstep.md, "Reference parity"):
# parastream and the PyTorch reference (scripts/parity.py; /usr/bin/python3
# with Debian's python3-torch) trained from the same initial parameters,
# scored by `parastream eval run`; a table in out/parity/parity.tsv.
# `make parity-exact` checks the reference step by step against parastream
# (out/parity/exact.tsv). Not part of `make test`, which needs no Python.
PARITY_DATASET     ?= quora
PARITY_ENCODERS    ?= avg lstmavg gran
PARITY_EPOCHS      ?= 1
PARITY_SEEDS       ?= 1
PARITY_DIM         ?= 100
PARITY_BATCH       ?= 100
PARITY_TRAIN_FLAGS ?=
PARITY_OUT         ?= out/parity
PARITY_EXACT_STEPS ?= 30
PARITY_ENV = PARITY_DATASET='$(PARITY_DATASET)' PARITY_ENCODERS='$(PARITY_ENCODERS)' PARITY_EPOCHS='$(PARITY_EPOCHS)' \
	PARITY_SEEDS='$(PARITY_SEEDS)' PARITY_DIM='$(PARITY_DIM)' PARITY_BATCH='$(PARITY_BATCH)' \
	PARITY_TRAIN_FLAGS='$(PARITY_TRAIN_FLAGS)' PARITY_OUT='$(PARITY_OUT)' PARITY_EXACT_STEPS='$(PARITY_EXACT_STEPS)' PARITY_BIN=./$(BIN)

parity: build
	$(PARITY_ENV) bash scripts/parity.sh table

parity-exact: build
	$(PARITY_ENV) bash scripts/parity.sh exact

# A short fuzzing pass over every parser (seeds stay in testdata/).
FUZZTIME ?= 10s
FUZZPKGS ?= $(shell $(GO) list ./...)
fuzz:
	@for p in $(FUZZPKGS); do \
		for f in $$($(GO) test -list 'Fuzz.*' $$p | grep ^Fuzz); do \
			echo "== $$p $$f"; $(GO) test $$p -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) || exit 1; \
		done; \
	done

fmt:
	gofmt -w $$(git ls-files -co --exclude-standard '*.go')

# vet and lint cover the -tags dataflow files too, so that they do not rot.
vet: vet-dataflow
	$(GO) vet $(PKGS)

vet-dataflow:
	$(GO) vet -tags dataflow ./cmd/parastream

# tools/archlint: no function of more than six parameters, no package-level
# var but errors, flags and registered DoFns (docs/architecture.md).
lint: vet
	@test -z "$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go'))" || (gofmt -l $$(git ls-files -co --exclude-standard '*.go'); echo "gofmt: files above need formatting"; exit 1)
	$(GO) run $(STATICCHECK) $(PKGS)
	$(GO) run $(STATICCHECK) -tags dataflow ./cmd/parastream
	$(GO) run ./tools/archlint .

interop:
	@if command -v npm >/dev/null 2>&1; then \
		test -d tools/interop/node_modules || (cd tools/interop && npm ci --no-audit --no-fund --loglevel=error); \
	else echo "npm not found: the DuckDB interop tests will be skipped"; fi

clean:
	rm -rf $(BIN) out/ tools/interop/node_modules
	$(GO) clean -testcache
