#!/usr/bin/env bash
# The GPU bundle's one command (`make gpu-bundle` builds the folder; issue
# 15, item 5; docs/gpu.md, "Running on a GPU machine (the bundle)"). On a
# machine with an NVIDIA GPU, its driver and a python3 with PyTorch, and no
# Go:
#
#   bash out/gpu-bundle/run.sh
#
# Stages, in order (RUN_STAGES picks some, default all):
#   tests   trainstep/cuda's tests with PARASTREAM_TEST_GPU=1: the
#           emulator-comparison tests on the device (every encoder and
#           loss the backend has against the CPU backend, Update, Embed,
#           NoAccumulation, NonFinite, Unsupported, CheckpointsAcrossBackends),
#           then trainstep's checkpoint tests (-test.run $TRAINSTEP_RUN:
#           exactly once across a resume, SIGKILL during a background
#           checkpoint where the binary has it; the list is printed)
#   bench   BenchmarkGPUTrainStep: avg, lstmavg, gran (and the transformer,
#           dimension 512) at batch 100 and 1,000
#   torch   scripts/gpu_bench.py: every PyTorch variant beside it, ratios
#   e2e     `parastream broker`, the PPDB lexical pairs (58k words)
#           extracted, featurized and published, `parastream train
#           --device cuda --model avg --checkpoint-every 1000`: its
#           examples/s beside the step benchmark's avg/batch100 pairs/s
#
# Everything printed goes to stdout and to the results folder ($OUT when
# set, else RESULTS, else ./gpu-bundle-results): run.log (all), summary.txt,
# tests-cuda.txt, tests-trainstep.txt, bench.txt, torch.txt, e2e.txt. The
# exit status is 0 only when every stage passed and both targets were met.
#
# Settings (environment):
#   RUN_STAGES      stages to run                      (tests bench torch e2e)
#   PYTHON          python3 with PyTorch               (python3)
#   CUDA_DEVICE     ordinal of the GPU                 (0)
#   BENCH_STEPS     -benchtime of the Go benchmark     (200, as Nx)
#   BENCH_COUNT     -count of the Go benchmark         (3; the median is taken)
#   TORCH_STEPS     timed steps of each PyTorch variant (100)
#   BENCH_PATTERN   -test.bench of the Go benchmark    (BenchmarkGPUTrainStep;
#                   BenchmarkGPUTrainStep/transformer: its rows alone)
#   TORCH_MODELS    gpu_bench.py --models              (avg,lstmavg,gran,transformer)
#   TRAINSTEP_RUN   trainstep tests run   (Checkpoint|Resume|Kill|ExactlyOnce|Background|Async|Durable)
#   E2E_STEPS       steps of the end-to-end run        (20000)
#   E2E_EVERY       its --checkpoint-every             (1000)
#   E2E_DEVICE      its --device                       (cuda:$CUDA_DEVICE)
#   E2E_DATA        ppdb (the bundle's PPDB lexical pairs, where it has
#                   them) or synthetic                 (ppdb)
#   E2E_ROWS        rows of the synthetic corpus       (300000)
#   BUNDLE_WORK     work directory, emptied first      (/tmp/parastream-gpu-bundle)
#   STAGE_TIMEOUT   seconds each stage may take        (420)
#   BUNDLE_NO_GPU_CHECK=1  skip the driver check (only to try the e2e stage
#                   on a CPU: RUN_STAGES=e2e E2E_DEVICE=cpu)
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
RES=${OUT:-${RESULTS:-$PWD/gpu-bundle-results}}
W=${BUNDLE_WORK:-/tmp/parastream-gpu-bundle}
PY=${PYTHON:-python3}
DEV=${CUDA_DEVICE:-0}
STAGES=${RUN_STAGES:-tests bench torch e2e}
BENCH_STEPS=${BENCH_STEPS:-200}
BENCH_COUNT=${BENCH_COUNT:-3}
TORCH_STEPS=${TORCH_STEPS:-100}
BENCH_PATTERN=${BENCH_PATTERN:-BenchmarkGPUTrainStep}
TORCH_MODELS=${TORCH_MODELS:-avg,lstmavg,gran,transformer}
TRAINSTEP_RUN=${TRAINSTEP_RUN:-Checkpoint|Resume|Kill|ExactlyOnce|Background|Async|Durable}
E2E_STEPS=${E2E_STEPS:-20000}
E2E_EVERY=${E2E_EVERY:-1000}
E2E_DEVICE=${E2E_DEVICE:-cuda:$DEV}
E2E_ROWS=${E2E_ROWS:-300000}
STAGE_TIMEOUT=${STAGE_TIMEOUT:-420}

mkdir -p "$RES" || { echo "run.sh: cannot create the results folder $RES" >&2; exit 1; }

main() {
	say() { printf '%s run.sh: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
	die() { say "FAILED: $*"; echo "FAILED: $*" >>"$RES/summary.txt"; exit 1; }
	has() { case " $STAGES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
	: >"$RES/summary.txt"
	summary() { echo "$*" | tee -a "$RES/summary.txt"; }
	TO=()
	if command -v timeout >/dev/null 2>&1; then TO=(timeout -k 10 "$STAGE_TIMEOUT"); fi

	say "parastream GPU bundle in $B; results in $RES; stages: $STAGES"
	[ -f "$B/MANIFEST" ] && sed -n '2,5p' "$B/MANIFEST"

	# --- Preflight: fail in seconds, naming what is missing. -----------------
	command -v "$PY" >/dev/null 2>&1 || die "no $PY: the bundle needs a python3 (with PyTorch for the torch stage) to unpack itself; set PYTHON"
	if [ "${BUNDLE_NO_GPU_CHECK:-0}" != 1 ]; then
		# The driver, as the Go loader will ask for it: libcuda.so.1 through the
		# dynamic loader (LD_LIBRARY_PATH, ld.so.cache) or PARASTREAM_CUDA_LIB_DIR.
		drv=$("$PY" - "$DEV" 2>&1 <<-'EOF'

			import ctypes, os, sys
			dev = int(sys.argv[1])
			names = []
			d = os.environ.get("PARASTREAM_CUDA_LIB_DIR")
			if d:
			    names.append(os.path.join(d, "libcuda.so.1"))
			names.append("libcuda.so.1")
			errs, cu = [], None
			for n in names:
			    try:
			        cu = ctypes.CDLL(n)
			        break
			    except OSError as e:
			        errs.append(f"{n}: {e}")
			if cu is None:
			    sys.exit("no NVIDIA driver: libcuda.so.1 cannot be loaded (" + "; ".join(errs) + "). "
			             "Install the NVIDIA driver, or point PARASTREAM_CUDA_LIB_DIR (or LD_LIBRARY_PATH) at the directory holding libcuda.so.1")
			r = cu.cuInit(0)
			if r != 0:
			    sys.exit(f"the NVIDIA driver is there but cuInit failed with CUDA error {r} (100: no device; 999: unknown, a broken driver)")
			n = ctypes.c_int(0)
			cu.cuDeviceGetCount(ctypes.byref(n))
			if n.value <= dev:
			    sys.exit(f"the NVIDIA driver sees {n.value} GPU(s): no cuda:{dev} (set CUDA_DEVICE)")
			v = ctypes.c_int(0)
			cu.cuDriverGetVersion(ctypes.byref(v))
			print(f"driver: libcuda.so.1 loads, CUDA {v.value // 1000}.{v.value % 1000 // 10}, {n.value} GPU(s)")
		EOF
		) || die "$drv (the bundle runs on a GPU machine)"
		echo "$drv"
		command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
	fi
	if has torch; then
		"$PY" -c 'import sys, torch; ok = torch.cuda.is_available(); print(f"PyTorch {torch.__version__}, sees the GPU: {ok}"); sys.exit(0 if ok else 1)' || die "the torch stage needs $PY with PyTorch that sees the GPU (or leave torch out of RUN_STAGES)"
	fi
	# NVIDIA's pip wheels (cuBLAS, NVRTC) sit in the virtualenv of the python
	# that holds PyTorch: tell the Go loader where that is.
	if [ -z "${VIRTUAL_ENV:-}" ]; then
		venv=$("$PY" -c 'import sys; print(sys.prefix if sys.prefix != sys.base_prefix else "")' 2>/dev/null || true)
		[ -z "$venv" ] || export VIRTUAL_ENV=$venv
	fi

	# --- Unpack. ---------------------------------------------------------------
	rm -rf "$W" && mkdir -p "$W/bin" || die "cannot create the work directory $W (set BUNDLE_WORK)"
	"$PY" - "$B" "$W" <<-'EOF' || die "unpacking the bundle failed (above): rebuild it with make gpu-bundle"
		import lzma, os, shutil, sys, tarfile
		b, w = sys.argv[1:3]
		for f in sorted(os.listdir(os.path.join(b, "bin"))):
		    dst = os.path.join(w, "bin", f[:-3])
		    with lzma.open(os.path.join(b, "bin", f)) as src, open(dst, "wb") as out:
		        shutil.copyfileobj(src, out, 1 << 20)
		    os.chmod(dst, 0o755)
		with tarfile.open(os.path.join(b, "files.tar.xz")) as t:
		    t.extractall(w, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
		print("unpacked:", ", ".join(sorted(os.listdir(os.path.join(w, "bin")))))
	EOF
	# Built with -trimpath, the test binaries find the repository's files at
	# github.com/parastream/parastream (and ../shared/data beside it) relative
	# to where they run: that is $W/gopath.
	mkdir -p "$W/gopath/github.com/parastream"
	ln -s "$W/shared" "$W/gopath/github.com/parastream/shared"
	ln -s "$W/pkg" "$W/gopath/github.com/parastream/parastream"
	mkdir -p "$W/pkg/trainstep/cuda" "$W/shared/data"

	failed=()
	fail() { failed+=("$1"); say "FAILED: $1"; }

	# counts FILE: "N passed, N failed, N skipped" of a -test.v log (top-level
	# tests and subtests).
	counts() { printf '%s passed, %s failed, %s skipped' "$(grep -c -- '--- PASS' "$1")" "$(grep -c -- '--- FAIL' "$1")" "$(grep -c -- '--- SKIP' "$1")"; }

	# --- Tests. ----------------------------------------------------------------
	if has tests; then
		say "trainstep/cuda tests on cuda:$DEV (PARASTREAM_TEST_GPU=cuda:$DEV)"
		(cd "$W/pkg/trainstep/cuda" && PARASTREAM_TEST_GPU=cuda:$DEV "${TO[@]}" "$W/bin/cuda.test" -test.v -test.count=1 -test.timeout 6m) >"$RES/tests-cuda.txt" 2>&1
		rc=$?
		grep -E -- '^(=== RUN|--- FAIL|--- SKIP|FAIL|PASS|ok|panic)|cannot be opened|no GPU opens' "$RES/tests-cuda.txt" | grep -v '^=== RUN' | tail -40
		summary "tests trainstep/cuda on the GPU: exit $rc, $(counts "$RES/tests-cuda.txt")"
		[ "$rc" = 0 ] || fail "trainstep/cuda tests (exit $rc): see tests-cuda.txt"

		list=$(cd "$W/pkg/trainstep" && "$W/bin/trainstep.test" -test.list "$TRAINSTEP_RUN" 2>&1 | grep -E '^(Test|Example)' | paste -sd' ' -)
		say "trainstep tests matching $TRAINSTEP_RUN: ${list:-none}"
		case " $list " in *Kill*) ;; *) say "note: no trainstep test with Kill in its name in this build: SIGKILL during a background checkpoint is not among them" ;; esac
		(cd "$W/pkg/trainstep" && PARASTREAM_TEST_GPU=cuda:$DEV "${TO[@]}" "$W/bin/trainstep.test" -test.v -test.count=1 -test.timeout 6m -test.run "$TRAINSTEP_RUN") >"$RES/tests-trainstep.txt" 2>&1
		rc=$?
		grep -E -- '^(--- |FAIL|PASS|ok|panic)' "$RES/tests-trainstep.txt" | tail -40
		summary "tests trainstep ($list): exit $rc, $(counts "$RES/tests-trainstep.txt")"
		[ "$rc" = 0 ] || fail "trainstep checkpoint tests (exit $rc): see tests-trainstep.txt"
	fi

	# --- The step benchmark. ---------------------------------------------------
	median_pairs() { # median pairs/s of BenchmarkGPUTrainStep/$1 in bench.txt
		grep -E "^BenchmarkGPUTrainStep/$1(-[0-9]+)?[[:space:]]" "$RES/bench.txt" | sed -n 's/.*[[:space:]]\([0-9.e+]*\) pairs\/s.*/\1/p' | sort -g |
			awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
	}
	if has bench; then
		say "$BENCH_PATTERN: -benchtime ${BENCH_STEPS}x -count $BENCH_COUNT on cuda:$DEV"
		(cd "$W/gopath" && PARASTREAM_BENCH_DEVICE=cuda:$DEV "${TO[@]}" "$W/bin/cuda.test" \
			-test.run '^$' -test.bench "$BENCH_PATTERN" -test.benchtime "${BENCH_STEPS}x" -test.count "$BENCH_COUNT" -test.timeout 6m) >"$RES/bench.txt" 2>&1
		rc=$?
		cat "$RES/bench.txt"
		if [ "$rc" != 0 ] || ! grep -q 'pairs/s' "$RES/bench.txt"; then
			fail "BenchmarkGPUTrainStep (exit $rc, no pairs/s: see bench.txt)"
		else
			for k in avg/batch100 lstmavg/batch100 gran/batch100 transformer/batch100 avg/batch1000 lstmavg/batch1000 gran/batch1000 transformer/batch1000; do
				v=$(median_pairs "$k")
				[ -n "$v" ] && summary "bench $k: $v pairs/s (median of $BENCH_COUNT)"
			done
		fi
	fi

	# --- PyTorch beside it. ----------------------------------------------------
	if has torch; then
		if [ -s "$RES/bench.txt" ] && grep -q 'pairs/s' "$RES/bench.txt"; then
			src=(--go-output "$RES/bench.txt")
		else
			src=(--go-test-binary "$W/bin/cuda.test")
		fi
		say "scripts/gpu_bench.py: every PyTorch variant, $TORCH_STEPS steps each"
		(cd "$W/gopath" && PYTHONUNBUFFERED=1 "${TO[@]}" "$PY" "$W/repo/scripts/gpu_bench.py" \
			--device "cuda:$DEV" --steps "$TORCH_STEPS" --models "$TORCH_MODELS" "${src[@]}") 2>&1 | tee "$RES/torch.txt"
		rc=${PIPESTATUS[0]}
		grep -E '^(avg|lstmavg|gran|transformer)/batch' "$RES/torch.txt" | sed 's/^/torch /' >>"$RES/summary.txt"
		if [ "$rc" != 0 ]; then
			fail "scripts/gpu_bench.py (exit $rc): see torch.txt"
		elif grep -qE 'BELOW 1.0|NO RATIO' "$RES/torch.txt"; then
			fail "parastream below the strongest PyTorch variant in: $(grep 'BELOW 1.0' "$RES/torch.txt" | cut -d' ' -f1 | paste -sd' ' -)"
		fi
	fi

	# --- End to end from the embedded broker. ----------------------------------
	if has e2e; then
		P=$W/bin/parastream
		D=$W/e2e
		mkdir -p "$D"
		(
			set -e
			ppdb=$W/shared/data/corpora/ppdb/ppdb-1.0-xxxl-lexical-synonym-pairs.tsv
			if [ -f "$ppdb" ] && [ "${E2E_DATA:-ppdb}" = ppdb ]; then
				input=$ppdb corpus=ppdb-pairs
				echo "data: the PPDB 1.0 XXXL lexical pairs ($(wc -l <"$ppdb") lines)"
			else
				input=$D/ppdb-synthetic.tsv corpus=ppdb
				echo "data: synthetic (no PPDB file in the bundle, or E2E_DATA=synthetic): parastream gen ppdb --rows $E2E_ROWS"
				"$P" gen ppdb --ppdb-version 1 --rows "$E2E_ROWS" --malformed-rate 0 --out "$input"
			fi
			t0=$(date +%s)
			"$P" extract --corpus "$corpus" --input "$input" --out "$D/raw" --quiet
			"$P" featurize --in "$D/raw" --out "$D/feat" --oov-buckets 0 --quiet # the vocabulary alone: 58k rows for PPDB, as issue 15 measured
			echo "extract and featurize: $(($(date +%s) - t0)) s"
			"$P" broker --listen 127.0.0.1:0 --data-dir "$D/broker" >"$D/broker.out" 2>"$D/broker.err" &
			bpid=$!
			trap 'kill $bpid 2>/dev/null; wait $bpid 2>/dev/null' EXIT
			addr=""
			for _ in $(seq 100); do
				addr=$(sed -n 's/^broker listening on \([^ ]*\).*/\1/p' "$D/broker.out")
				[ -n "$addr" ] && break
				kill -0 "$bpid" 2>/dev/null || { cat "$D/broker.out" "$D/broker.err"; exit 1; }
				sleep 0.1
			done
			[ -n "$addr" ] || { echo "the broker gave no address in 10 s"; exit 1; }
			echo "broker on $addr"
			"$P" publish --shards "$D/feat" --brokers "$addr" --topic-prefix gb --dataset "$corpus" --quiet
			echo "train: --device $E2E_DEVICE --model avg --checkpoint-every $E2E_EVERY --max-steps $E2E_STEPS"
			"$P" train --brokers "$addr" --topic-prefix gb --dataset "$corpus" --model avg --device "$E2E_DEVICE" \
				--checkpoint-every "$E2E_EVERY" --keep-checkpoints 2 --max-steps "$E2E_STEPS" --epochs 1000 \
				--checkpoint-dir "$D/ck" --run gpu-bundle-avg --progress-every 5s
			last=$(find "$D/ck" -maxdepth 1 -name 'step-*' -type d | sort | tail -1)
			"$PY" - "$last" <<-'EOF'
				import json, os, sys
				d = sys.argv[1]
				c = json.load(open(os.path.join(d, "config.json")))
				t = json.load(open(os.path.join(d, "trainer.json")))
				print(f"vocabulary: {c.get('vocab')} rows of the embedding table (words, special tokens, out-of-vocabulary buckets); "
				      f"checkpoint {d}: step {t.get('step')}, backend {t.get('backend')}")
			EOF
		) >"$RES/e2e.txt" 2>&1
		rc=$?
		grep -v '^train .*: step [0-9]* epoch' "$RES/e2e.txt" | tail -30
		grep '^train .*: step [0-9]* epoch' "$RES/e2e.txt" | tail -3
		eps=$(sed -n 's/^run .* \([0-9][0-9]*\) examples\/s on .*/\1/p' "$RES/e2e.txt" | tail -1)
		if [ "$rc" != 0 ] || [ -z "$eps" ]; then
			fail "end-to-end run (exit $rc): see e2e.txt"
		else
			summary "e2e: $(grep '^vocabulary:' "$RES/e2e.txt" | cut -d' ' -f2) embedding rows, $eps examples/s (avg, --device $E2E_DEVICE, checkpoints every $E2E_EVERY steps)"
			step=""
			has bench && [ -s "$RES/bench.txt" ] && step=$(median_pairs avg/batch100)
			if [ -n "$step" ]; then
				verdict=$(awk -v e="$eps" -v s="$step" 'BEGIN { r = e / s; printf "%.2f %s", r, (r >= 0.8 ? "ok (>= 0.8)" : "BELOW 0.8") }')
				summary "e2e: $eps examples/s end to end, $step pairs/s in the step benchmark (avg/batch100), ratio $verdict"
				case $verdict in *BELOW*) fail "end to end below 0.8 x the step benchmark" ;; esac
			else
				summary "e2e: no step benchmark in this run (RUN_STAGES without bench): no ratio"
			fi
		fi
	fi

	echo
	say "summary ($RES/summary.txt):"
	cat "$RES/summary.txt"
	if [ ${#failed[@]} -gt 0 ]; then
		printf 'FAILED: %s\n' "${failed[@]}" | tee -a "$RES/summary.txt"
		exit 1
	fi
	echo "all stages passed" | tee -a "$RES/summary.txt"
}

main 2>&1 | tee "$RES/run.log"
exit "${PIPESTATUS[0]}"
