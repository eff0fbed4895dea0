#!/usr/bin/env bash
# `make gpu-bundle` (issue 15, item 5): everything a GPU machine with no Go
# needs to run the GPU checks, in one folder (default out/gpu-bundle):
#
#   run.sh                   the one command there (scripts/gpu_bundle/run.sh)
#   bin/parastream.xz        CGO_ENABLED=0 go build ./cmd/parastream
#   bin/cuda.test.xz         go test -c ./trainstep/cuda: the emulator-
#                            comparison tests (on the device with
#                            PARASTREAM_TEST_GPU=1) and BenchmarkGPUTrainStep,
#                            the benchmark binary
#   bin/trainstep.test.xz    go test -c ./trainstep: the checkpoint and
#                            exactly-once tests
#   files.tar.xz             under pkg/, the repository's files the tests
#                            and PyTorch read (go.mod, docs/reference.md,
#                            scripts/gpu_bench.py and train_bench.py,
#                            trainstep/testdata, trainstep/cuda/testdata);
#                            under shared/data, the STS 2012 inputs (sentence
#                            lengths) and the PPDB lexical pairs (the
#                            end-to-end run's data, 58k words) from
#                            ../shared/data when present
#   MANIFEST                 what was built, from which commit, sizes
#
# Everything is built with CGO_ENABLED=0 and -trimpath (so that the test
# binaries find the bundle's data relative to where run.sh runs them) and
# compressed with xz (GPU_BUNDLE_XZ, default -6); the build fails when the
# folder passes 40 MiB (GPU_BUNDLE_LIMIT_MIB), so that it travels with a
# working tree in the 64 MiB a GPU machine is sent.
#
# cmd/parastream's tests are not in the bundle: its device tests check what
# happens without a GPU and skip where one is usable; the end-to-end run
# covers `train --device cuda` there.
#
# Settings (environment): GO (go), GPU_BUNDLE_DIR (out/gpu-bundle),
# GPU_BUNDLE_XZ (xz options, -6), GPU_BUNDLE_DATA (../shared/data),
# GPU_BUNDLE_LIMIT_MIB (40).
set -euo pipefail
cd "$(dirname "$0")/../.."

GO=${GO:-go}
DIR=${GPU_BUNDLE_DIR:-out/gpu-bundle}
XZ=${GPU_BUNDLE_XZ:--6}
DATA=${GPU_BUNDLE_DATA:-../shared/data}
VERSION=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT=$(git rev-parse HEAD 2>/dev/null || echo unknown)

say() { printf 'gpu-bundle: %s\n' "$*" >&2; }
command -v xz >/dev/null || { say "xz is needed to compress the bundle (apt-get install xz-utils)"; exit 1; }

stage=$(mktemp -d "${TMPDIR:-/tmp}/gpu-bundle.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/files/pkg/scripts" "$stage/files/pkg/docs" "$stage/files/pkg/trainstep/cuda"

export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -trimpath"
say "building parastream ($VERSION, CGO_ENABLED=0)"
"$GO" build -ldflags "-s -w -X main.version=$VERSION" -o "$stage/bin/parastream" ./cmd/parastream
say "building the test binaries: trainstep/cuda (tests and BenchmarkGPUTrainStep), trainstep"
"$GO" test -c -ldflags '-s -w' -o "$stage/bin/cuda.test" ./trainstep/cuda
"$GO" test -c -ldflags '-s -w' -o "$stage/bin/trainstep.test" ./trainstep

# The test binaries find these through testenv.Root (the go.mod above
# their working directory) or relative to their package, as in a checkout.
cp go.mod "$stage/files/pkg/"
cp docs/reference.md "$stage/files/pkg/docs/"
cp scripts/gpu_bench.py scripts/train_bench.py "$stage/files/pkg/scripts/"
cp -r trainstep/testdata "$stage/files/pkg/trainstep/"
cp -r trainstep/cuda/testdata "$stage/files/pkg/trainstep/cuda/"
have_data=""
if compgen -G "$DATA/eval/sts/2012/STS.input.*.txt" >/dev/null; then
	mkdir -p "$stage/files/shared/data/eval/sts/2012"
	cp "$DATA"/eval/sts/2012/STS.input.*.txt "$stage/files/shared/data/eval/sts/2012/"
	have_data+=" STS-2012-inputs"
else
	say "$DATA/eval/sts/2012 is absent: the benchmarks will use synthetic sentence lengths (4-24)"
fi
ppdb="$DATA/corpora/ppdb/ppdb-1.0-xxxl-lexical-synonym-pairs.tsv"
if [ -f "$ppdb" ]; then
	mkdir -p "$stage/files/shared/data/corpora/ppdb"
	cp "$ppdb" "$stage/files/shared/data/corpora/ppdb/"
	have_data+=" PPDB-lexical-pairs"
else
	say "$ppdb is absent: the end-to-end run will train on a synthetic PPDB corpus (parastream gen ppdb)"
fi

rm -rf "$DIR"
mkdir -p "$DIR/bin"
for f in "$stage"/bin/*; do
	say "compressing $(basename "$f") ($(du -h "$f" | cut -f1))"
	xz -T0 "$XZ" -c "$f" >"$DIR/bin/$(basename "$f").xz"
done
tar -C "$stage/files" -cf - . | xz -T0 "$XZ" -c >"$DIR/files.tar.xz"
cp scripts/gpu_bundle/run.sh "$DIR/run.sh"
chmod +x "$DIR/run.sh"
{
	echo "parastream GPU bundle"
	echo "version: $VERSION"
	echo "commit: $COMMIT"
	echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) with $("$GO" version | cut -d' ' -f3-)"
	echo "data:${have_data:- none}"
	(cd "$DIR" && find . -type f ! -name MANIFEST -printf '%P %s\n' | sort)
} >"$DIR/MANIFEST"
total=$(du -sb "$DIR" | cut -f1)
limit_mib=${GPU_BUNDLE_LIMIT_MIB:-40}
say "$DIR: $((total / 1024 / 1024)) MiB ($total bytes)"
if [ "$total" -gt $((limit_mib * 1024 * 1024)) ]; then
	say "$DIR is over $limit_mib MiB: it travels with the working tree to the GPU machine, 64 MiB in all (GPU_BUNDLE_LIMIT_MIB sets the bound)"
	exit 1
fi
say "run it on a GPU machine: bash $DIR/run.sh (docs/gpu.md, \"Running on a GPU machine (the bundle)\")"
