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
# make bench's suites (make bench-go: Go benchmarks) to run; `make bench BENCH=TrainStep`.
BENCH       ?= .
# make eval-data's input (the shared data) and output directories.
DATA        ?= ../shared/data
EVAL_OUT    ?= out/eval

.PHONY: all build eval-data eval-research build-dataflow vet-dataflow test test-long test-faults demo demo-models bench bench-compare bench-go bench-mem fmt vet tidy lint clean interop fuzz parity parity-exact gpu-bundle

all: build

# The default build has Prism and the portable runner (Flink, Spark, any
# job server). Google Cloud Dataflow and the gs:// filesystem are behind the
# build tag dataflow: `make build-dataflow` (a larger binary, a slower build).
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/parastream

build-dataflow:
	$(GO) build -trimpath -tags dataflow -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/parastream

# Tests read ../shared/data when it is there and skip those parts with a
# message when it is not. The DuckDB and Hugging Face tokenizer interop tests need tools/interop's npm
# packages: `make interop` installs them when npm is available.
# `make test` runs go test -short: a test that skips itself under
# testing.Short() is a long one, and `make test-long` runs just those; CI
# runs both (scripts/gotest.sh). Each prints its slowest packages and time.
test: interop
	GO='$(GO)' PKGS='$(PKGS)' bash scripts/gotest.sh short

test-long: interop test-faults
	GO='$(GO)' PKGS='$(PKGS)' bash scripts/gotest.sh long

# The fault suite (issue 38; docs/stream.md, docs/trainstep.md): the
# commands run as processes while the broker is SIGKILLed and restarted, a
# second trainer starts on a running run (on this machine and as if on
# another), a trainer is killed and resumed,
# a watcher evaluates checkpoints a trainer prunes, extract is given a
# directory of the user's files, and a checkpoint fills a 2 MiB tmpfs
# (where unshare -rm may mount one). Each probe prints "probe NAME: kills K,
# rows checked N, lost 0, duplicated 0, leftovers 0" and fails otherwise.
# About a minute on 2 cores; part of make test-long, and so of CI.
test-faults:
	@mkdir -p out/test
	bash -c "set -o pipefail; $(GO) test -count=1 -timeout 10m -v -run '^TestFault' ./cmd/parastream \
		| tee out/test/faults.log | grep -E '^(probe |--- |ok |FAIL|panic)'"

# The evaluation sets of $(DATA) extracted, each with its official splits
# and every pair, into ONE directory, $(EVAL_OUT), for `parastream eval
# --eval $(EVAL_OUT)`: successive extracts into one --out add their corpus
# to its manifest (docs/corpora.md, "Evaluation sets").
# `make eval-data DATA=/path/to/data EVAL_OUT=out/eval`.
eval-data: build
	./$(BIN) extract --corpus sts         --input '$(DATA)/eval/sts/*/STS.input.*.txt'        --out $(EVAL_OUT)
	./$(BIN) extract --corpus stsb        --input '$(DATA)/eval/stsbenchmark/sts-*.csv'       --out $(EVAL_OUT)
	./$(BIN) extract --corpus sick        --input '$(DATA)/eval/sick/SICK_*.txt'              --out $(EVAL_OUT)
	./$(BIN) extract --corpus snli        --input '$(DATA)/eval/snli/snli_1.0_*.jsonl.gz'     --out $(EVAL_OUT)
	./$(BIN) extract --corpus msrp        --input '$(DATA)/corpora/msrp/msr_paraphrase_*.txt' --out $(EVAL_OUT)
	./$(BIN) extract --corpus sst         --input '$(DATA)/eval/sst/sentiment-*'              --out $(EVAL_OUT)
	./$(BIN) extract --corpus mr          --input '$(DATA)/eval/mr/rt-polarity.*'             --out $(EVAL_OUT)
	./$(BIN) extract --corpus semeval-cqa --input '$(DATA)/eval/semeval2017-cqa/*.xml'        --out $(EVAL_OUT)
	./$(BIN) extract --corpus trecqa      --input '$(DATA)/eval/trecqa/*/a.toks'              --out $(EVAL_OUT)
	./$(BIN) extract --corpus wikiqa      --input '$(DATA)/eval/wikiqa/WikiQA-*.tsv.gz'       --out $(EVAL_OUT)
	./$(BIN) extract --corpus scws        --input '$(DATA)/eval/scws/ratings.txt'             --out $(EVAL_OUT)

demo: build
	./$(BIN) demo --data testdata --out out/demo

# The research's evaluations end to end on the shared data (issue 23;
# docs/evalsink.md, "Every task on one checkpoint"): every evaluation set,
# a single-task and a multitask (Quora + SNLI) run, their STS adaptations,
# one eval run of each checkpoint (out of the box and adapted) with every
# task's figure and interval, and eval compare of the two. Settings in
# scripts/eval_research.sh (OUT, MODEL, DIM, EPOCHS, SEED, MIX). Not part
# of make test.
eval-research: build
	BIN=./$(BIN) DATA='$(DATA)' bash scripts/eval_research.sh

# The research's three larger models (transformer, csae, edd), a few steps
# each on the demo's stream, evaluated (docs/models/).
demo-models: build
	./$(BIN) demo --models --data testdata --out out/demo-models

# make bench (issue 21): tools/benchreport runs the benchmarks that compare
# with a peer (Reddit extraction beside PolyAI's per-core rate and a plain
# loop, its peak RSS, NMF beside scikit-learn, publish and consume beside
# kcat, the training step beside PyTorch CPU at 20,000 and 400,000 words,
# training end to end from the broker), each figure BENCH_COUNT times, and
# writes bench/results/<date>-<commit>.md and .json (the table) and .txt
# (the go test output, benchstat's format). BENCH selects suites by name
# (`go run ./tools/benchreport -list`); a peer not installed (kcat, b3sum,
# python3-sklearn, python3-torch) leaves its rows saying so. 645 s (11
# minutes) on the idle 2-core box, 33 minutes at load 4 to 16.
# Not part of make test or CI.
# `make bench-compare OLD=bench/results/<earlier>.txt` prints benchstat's
# comparison of that run with the latest (or NEW=).
# `make bench-go BENCH=<go regexp>` runs any Go benchmark over PKGS, alone.
BENCH_COUNT ?= 3
BENCH_FLAGS ?=
BENCHSTAT   := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
bench:
	$(GO) run ./tools/benchreport -bench '$(BENCH)' -count $(BENCH_COUNT) $(BENCH_FLAGS)

bench-compare:
	@test -n "$(OLD)" || { echo "bench-compare: name the earlier run: make bench-compare OLD=bench/results/<date>-<commit>.txt"; exit 2; }
	@new="$(NEW)"; [ -n "$$new" ] || new=$$(ls -t bench/results/*.txt 2>/dev/null | head -1); \
	[ -n "$$new" ] || { echo "bench-compare: no bench/results/*.txt: run make bench first"; exit 2; }; \
	echo "benchstat $(OLD) $$new"; $(GO) run $(BENCHSTAT) "$(OLD)" "$$new"

bench-go:
	@mkdir -p out/bench
	bash -c "set -o pipefail; $(GO) test -run '^\$$' -bench '$(BENCH)' -benchmem -count=1 -timeout 60m $(PKGS) | tee out/bench/go.txt"

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
tidy:
	@$(GO) mod tidy -diff >/dev/null 2>&1 || ($(GO) mod tidy -diff; echo "go.mod/go.sum: not tidy; run go mod tidy and commit the change"; exit 1)

vet: vet-dataflow
	$(GO) vet $(PKGS)

vet-dataflow:
	$(GO) vet -tags dataflow ./cmd/parastream

# tools/archlint: imports only as its table allows, flag sets only in cmd, no
# function of more than six parameters, no package-level var but errors,
# flags and registered DoFns (docs/architecture.md).
# tidy: go.mod and go.sum are what `go mod tidy` would write (a module
# imported directly is not marked indirect, none is missing or unused).
lint: vet tidy
	@test -z "$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go'))" || (gofmt -l $$(git ls-files -co --exclude-standard '*.go'); echo "gofmt: files above need formatting"; exit 1)
	$(GO) run $(STATICCHECK) $(PKGS)
	$(GO) run $(STATICCHECK) -tags dataflow ./cmd/parastream
	$(GO) run ./tools/archlint .

interop:
	@if command -v npm >/dev/null 2>&1; then \
		test -f tools/interop/node_modules/@huggingface/tokenizers/package.json -a -d tools/interop/node_modules/@duckdb \
			|| (cd tools/interop && npm ci --no-audit --no-fund --loglevel=error); \
	else echo "npm not found: the DuckDB and Hugging Face tokenizer interop tests will be skipped"; fi

clean:
	rm -rf $(BIN) out/ tools/interop/node_modules
	$(GO) clean -testcache
