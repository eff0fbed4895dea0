#!/usr/bin/env bash
# The GPU bundle's one command (`make gpu-bundle` builds the folder; issues
# 15 and 35; docs/gpu.md, "Running on a GPU machine (the bundle)"). On a
# machine with an NVIDIA GPU, its driver and a python3 with PyTorch, and no
# Go:
#
#   bash out/gpu-bundle/run.sh            # the default: at most 6 minutes
#   RUN_STAGES=full bash out/gpu-bundle/run.sh   # the longer sweeps
#
# The default fits one device call (10 minutes, the machine's start
# included): after unpacking, its stages run in at most 360 s, each under a
# time limit (its budget, below): check, tests, bench and torch one after
# the other (240 s), the end-to-end run's data prepared beside them (at
# most 200 s), then e2e (40 s) and profile (60 s).
#
#   stage   budget  what
#   check     20 s  parastream device check: device, driver, cuBLAS, NVRTC,
#                   the kernels compiled, every encoder x loss one step on
#                   the device and on the emulator, eager and replayed
#   tests     80 s  trainstep/cuda's whole test suite with
#                   PARASTREAM_TEST_GPU=cuda:N (every emulator-comparison
#                   test on the device), then trainstep's checkpoint tests
#                   (-test.run $TRAINSTEP_RUN)
#   bench     90 s  BenchmarkGPUTrainStep: one row per encoder (avg,
#                   lstmavg, gran, transformer) at batch 100 and 1,000,
#                   BENCH_STEPS steps, once
#   torch     50 s  scripts/gpu_bench.py: PyTorch's strongest variant of
#                   each row in issue 15's measurements (graph: the whole
#                   step as a CUDA graph; cudnn-graph for the recurrent
#                   encoders), TORCH_STEPS steps, beside the bench rows
#   prep     200 s  (in the background, from the start, on the CPU) the
#                   end-to-end run's data: the PPDB lexical pairs (58k
#                   words) extracted and featurized
#   e2e       40 s  once the data is ready: `parastream broker`, the data
#                   published, `parastream train --device cuda --model avg
#                   --checkpoint-every 1000`, its examples/s beside the
#                   step rate of the same run's avg/batch100 row
#   profile   60 s  where a step's time goes, at PROFILE_ROWS: a Go CPU
#                   profile of PROFILE_STEPS steps of each (the host's
#                   side: profile.pprof, for go tool pprof) and, where
#                   Nsight Compute (ncu) is installed, each kernel's time
#                   on the device over the first NCU_LAUNCHES launches
#                   (profile.txt: launches, total and mean a kernel)
#
# The budgets come from the runs on an H200 (2026-11-28,
# bench/results/gpu/): check took 4-6 s, tests 12-24 s, bench 24-28 s,
# torch 23-32 s, e2e 5-7 s, the data 6-9 s, profile 14-19 s; a default
# run 100-127 s, unpacking included. (The first run's bench ran out of its
# then 60 s in the transformer at batch 1,000, whose warm-up waited for
# two garbage collections: 150-300 steps; now three passes over the 8
# batches.) Each budget is several times what it took.
# The report says what each stage took; when a stage's limit ends it, the
# report says so.
#
# RUN_STAGES=full runs every stage at the sweep sizes (BENCH_STEPS 200,
# BENCH_COUNT 3, every PyTorch variant, TORCH_STEPS 100, E2E_STEPS 20000,
# BenchmarkGPUGraphs: eager, graphs, graphs+TF32) with STAGE_TIMEOUT (420 s)
# each: two calls or more.
#
# Results ($OUT when set, else RESULTS, else ./gpu-bundle-results): three
# files (a device call brings back eight at most): report.md and
# report.json (every stage: status, seconds, budget, figures, failures),
# and logs.tar.gz: run.log (all output), check.txt, tests.txt, bench.txt,
# torch.txt, e2e.txt, e2e.pprof (the end-to-end run's CPU profile),
# profile.txt and profile.pprof. Until the end the
# logs are in logs/ there (where a run cut short leaves them). The exit
# status is 0 only when every stage ran and passed and both targets were
# met.
#
# Settings (environment):
#   RUN_STAGES      stages to run, or full   (check tests bench torch e2e profile)
#   PYTHON          python3 with PyTorch               (python3)
#   CUDA_DEVICE     ordinal of the GPU                 (0)
#   BENCH_STEPS     -benchtime of the Go benchmark     (100; full: 200, as Nx)
#   BENCH_COUNT     -count of the Go benchmark         (1; full: 3; the median)
#   TORCH_STEPS     timed steps of each PyTorch variant (30; full: 100)
#   TORCH_VARIANTS  gpu_bench.py --variants
#                   (graph,cudnn-graph,cudnn-graph-fp32; full: all)
#   BENCH_TF32      encoders the bench stage also times with --tf32
#                   (BenchmarkGPUGraphs' graphs+tf32), beside cuDNN's
#                   TF32 (lstmavg gran; "" for none)
#   BENCH_PATTERN   -test.bench of the Go benchmark    (BenchmarkGPUTrainStep;
#                   full: also BenchmarkGPUGraphs)
#   TORCH_MODELS    gpu_bench.py --models              (avg,lstmavg,gran,transformer)
#   TRAINSTEP_RUN   trainstep tests run   (Checkpoint|Resume|Kill|ExactlyOnce|Background|Async|Durable)
#   E2E_STEPS       steps of the end-to-end run        (5000; full: 20000)
#   E2E_EVERY       its --checkpoint-every             (1000)
#   E2E_DEVICE      its --device                       (cuda:$CUDA_DEVICE)
#   E2E_DATA        ppdb (the bundle's PPDB lexical pairs, where it has
#                   them) or synthetic                 (ppdb)
#   E2E_ROWS        rows of the synthetic corpus       (300000)
#   PROFILE_ROWS    the profile stage's benchmark rows (avg/batch1000
#                   lstmavg/batch1000)
#   PROFILE_STEPS   steps of each under the CPU profiler (300)
#   NCU_LAUNCHES    kernel launches ncu times a row    (400)
#   BUNDLE_WORK     work directory, emptied first      (/tmp/parastream-gpu-bundle)
#   STAGE_TIMEOUT   seconds every stage may take, in place of its budget
#                   (full: 420)
#   BUNDLE_NO_GPU_CHECK=1  skip the driver check (only to try the e2e stage
#                   on a CPU: RUN_STAGES=e2e E2E_DEVICE=cpu)
set -uo pipefail
case "${1:-}" in
-h | --help | help)
	sed -n '2,/^set -uo pipefail$/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
	exit 0
	;;
esac
B=$(cd "$(dirname "$0")" && pwd)
RES=${OUT:-${RESULTS:-$PWD/gpu-bundle-results}}
W=${BUNDLE_WORK:-/tmp/parastream-gpu-bundle}
PY=${PYTHON:-python3}
DEV=${CUDA_DEVICE:-0}
STAGES=${RUN_STAGES:-check tests bench torch e2e profile}
FULL=0
if [ "$STAGES" = full ]; then
	FULL=1
	STAGES="check tests bench torch e2e profile"
fi
if [ "$FULL" = 1 ]; then
	BENCH_STEPS=${BENCH_STEPS:-200} BENCH_COUNT=${BENCH_COUNT:-3} TORCH_STEPS=${TORCH_STEPS:-100}
	TORCH_VARIANTS=${TORCH_VARIANTS:-eager,fused-adam,graph,cudnn,cudnn-graph,cudnn-graph-fp32}
	BENCH_PATTERN=${BENCH_PATTERN:-BenchmarkGPUTrainStep|BenchmarkGPUGraphs}
	E2E_STEPS=${E2E_STEPS:-20000} STAGE_TIMEOUT=${STAGE_TIMEOUT:-420}
fi
BENCH_STEPS=${BENCH_STEPS:-100}
BENCH_COUNT=${BENCH_COUNT:-1}
TORCH_STEPS=${TORCH_STEPS:-30}
TORCH_VARIANTS=${TORCH_VARIANTS:-graph,cudnn-graph,cudnn-graph-fp32}
BENCH_TF32=${BENCH_TF32-lstmavg gran}
BENCH_PATTERN=${BENCH_PATTERN:-BenchmarkGPUTrainStep}
TORCH_MODELS=${TORCH_MODELS:-avg,lstmavg,gran,transformer}
TRAINSTEP_RUN=${TRAINSTEP_RUN:-Checkpoint|Resume|Kill|ExactlyOnce|Background|Async|Durable}
E2E_STEPS=${E2E_STEPS:-5000}
E2E_EVERY=${E2E_EVERY:-1000}
E2E_DEVICE=${E2E_DEVICE:-cuda:$DEV}
E2E_ROWS=${E2E_ROWS:-300000}
PROFILE_ROWS=${PROFILE_ROWS:-avg/batch1000 lstmavg/batch1000}
PROFILE_STEPS=${PROFILE_STEPS:-300}
NCU_LAUNCHES=${NCU_LAUNCHES:-400}

# budget STAGE: its seconds (the header's table), or STAGE_TIMEOUT.
budget() {
	if [ -n "${STAGE_TIMEOUT:-}" ]; then
		echo "$STAGE_TIMEOUT"
		return
	fi
	case $1 in
	check) echo 20 ;; tests) echo 80 ;; bench) echo 90 ;; torch) echo 50 ;; prep) echo 200 ;; e2e) echo 40 ;; profile) echo 60 ;;
	esac
}

# The stages' logs, packed into $RES/logs.tar.gz at the end.
L=$RES/logs
rm -rf "$L" "$RES/logs.tar.gz"
mkdir -p "$L" || { echo "run.sh: cannot create the results folder $RES" >&2; exit 1; }

main() {
	say() { printf '%s run.sh: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
	has() { case " $STAGES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
	# The report's records: "STAGE<TAB>status<TAB>seconds<TAB>budget" in
	# $REC.stages, "STAGE<TAB>figure" in $REC.figures, failures in $REC.failed.
	REC=$(mktemp "${TMPDIR:-/tmp}/gpu-bundle-report.XXXXXX")
	: >"$REC.stages"
	: >"$REC.figures"
	: >"$REC.failed"
	trap 'rm -f "$REC" "$REC".*' EXIT
	figure() { printf '%s\t%s\n' "$1" "$2" >>"$REC.figures"; echo "$1: $2"; }
	fail() { printf '%s\n' "$1" >>"$REC.failed"; say "FAILED: $1"; }
	die() { say "FAILED: $*"; printf '%s\n' "$*" >>"$REC.failed"; report; exit 1; }
	T0=$(date +%s)
	# begin STAGE: starts its clock and its time limit (budget); left: the
	# seconds it has left; end STAGE RC: records it (124 or 137: the limit
	# ended it).
	begin() { STAGE=$1 STAGE_T=$(date +%s) STAGE_END=$(($(date +%s) + $(budget "$1"))); say "stage $1 (budget $(budget "$1") s)"; }
	left() { local l=$((STAGE_END - $(date +%s))); echo $((l > 1 ? l : 1)); }
	TO() { if command -v timeout >/dev/null 2>&1; then timeout -k 5 "$(left)" "$@"; else "$@"; fi; }
	end() {
		local st=passed took=$(($(date +%s) - STAGE_T))
		case $2 in
		0) ;;
		124 | 137) st="stopped at its time limit" ; fail "$1: stopped at its time limit ($(budget "$1") s)" ;;
		*) st="failed (exit $2)" ;;
		esac
		if [ "$2" = 0 ] && grep -q "^$1:" "$REC.failed"; then st=failed; fi
		printf '%s\t%s\t%s\t%s\n' "$1" "$st" "$took" "$(budget "$1")" >>"$REC.stages"
		say "stage $1: $st in $took s"
	}

	say "parastream GPU bundle in $B; results in $RES; stages: $STAGES$([ "$FULL" = 1 ] && echo ' (full)')"
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
	say "unpacked in $(($(date +%s) - T0)) s; the stages' clock starts now"
	T1=$(date +%s)
	P=$W/bin/parastream
	D=$W/e2e
	mkdir -p "$D"

	# --- The end-to-end run's data, on the CPU, beside the GPU stages. ---------
	if has e2e; then
		PREP_END=$((T1 + $(budget prep)))
		(
			set -e
			PT() { if command -v timeout >/dev/null 2>&1; then timeout -k 5 $((PREP_END > $(date +%s) ? PREP_END - $(date +%s) : 1)) nice "$@"; else "$@"; fi; }
			ppdb=$W/shared/data/corpora/ppdb/ppdb-1.0-xxxl-lexical-synonym-pairs.tsv
			if [ -f "$ppdb" ] && [ "${E2E_DATA:-ppdb}" = ppdb ]; then
				input=$ppdb corpus=ppdb-pairs
				echo "data: the PPDB 1.0 XXXL lexical pairs ($(wc -l <"$ppdb") lines)"
			else
				input=$D/ppdb-synthetic.tsv corpus=ppdb
				echo "data: synthetic (no PPDB file in the bundle, or E2E_DATA=synthetic): parastream gen ppdb --rows $E2E_ROWS"
				PT "$P" gen ppdb --ppdb-version 1 --rows "$E2E_ROWS" --malformed-rate 0 --out "$input"
			fi
			echo "$corpus" >"$D/corpus"
			t0=$(date +%s)
			PT "$P" extract --corpus "$corpus" --input "$input" --out "$D/raw" --quiet
			PT "$P" featurize --in "$D/raw" --out "$D/feat" --oov-buckets 0 --quiet # the vocabulary alone: 58k rows for PPDB, as issue 15 measured
			echo "extract and featurize (in the background): $(($(date +%s) - t0)) s"
		) >"$D/prep.txt" 2>&1 &
		PREP=$!
	fi

	# counts FILE: "N passed, N failed, N skipped" of a -test.v log (top-level
	# tests and subtests).
	counts() { printf '%s passed, %s failed, %s skipped' "$(grep -c -- '--- PASS' "$1")" "$(grep -c -- '--- FAIL' "$1")" "$(grep -c -- '--- SKIP' "$1")"; }

	# --- The device check. -----------------------------------------------------
	if has check; then
		begin check
		TO "$P" device check --device "cuda:$DEV" >"$L/check.txt" 2>&1
		rc=$?
		cat "$L/check.txt"
		line=$(grep -E '^[0-9]+ cases, [0-9]+ failed' "$L/check.txt" | tail -1)
		dline=$(sed -n 's/^device *//p' "$L/check.txt" | head -1)
		[ -z "$dline" ] || figure check "$dline"
		figure check "${line:-no summary line: see check.txt}"
		[ "$rc" = 0 ] || fail "check: parastream device check (exit $rc): see check.txt"
		end check "$rc"
	fi

	# --- Tests. ----------------------------------------------------------------
	if has tests; then
		begin tests
		say "trainstep/cuda tests on cuda:$DEV (PARASTREAM_TEST_GPU=cuda:$DEV)"
		(cd "$W/pkg/trainstep/cuda" && PYTHON=$PY PARASTREAM_TEST_GPU=cuda:$DEV TO "$W/bin/cuda.test" -test.v -test.count=1) >"$W/tests-cuda.txt" 2>&1
		rc1=$?
		grep -E -- '^(--- FAIL|--- SKIP|FAIL|PASS|ok|panic)|cannot be opened|no GPU opens' "$W/tests-cuda.txt" | tail -40
		figure tests "trainstep/cuda on the GPU: exit $rc1, $(counts "$W/tests-cuda.txt")"
		[ "$rc1" = 0 ] || fail "tests: trainstep/cuda (exit $rc1): see tests.txt"

		list=$(cd "$W/pkg/trainstep" && "$W/bin/trainstep.test" -test.list "$TRAINSTEP_RUN" 2>&1 | grep -E '^(Test|Example)' | paste -sd' ' -)
		say "trainstep tests matching $TRAINSTEP_RUN: ${list:-none}"
		case " $list " in *Kill*) ;; *) say "note: no trainstep test with Kill in its name in this build: SIGKILL during a background checkpoint is not among them" ;; esac
		(cd "$W/pkg/trainstep" && PARASTREAM_TEST_GPU=cuda:$DEV TO "$W/bin/trainstep.test" -test.v -test.count=1 -test.run "$TRAINSTEP_RUN") >"$W/tests-trainstep.txt" 2>&1
		rc2=$?
		grep -E -- '^(--- |FAIL|PASS|ok|panic)' "$W/tests-trainstep.txt" | tail -40
		figure tests "trainstep ($list): exit $rc2, $(counts "$W/tests-trainstep.txt")"
		[ "$rc2" = 0 ] || fail "tests: trainstep checkpoint tests (exit $rc2): see tests.txt"
		cat "$W/tests-cuda.txt" "$W/tests-trainstep.txt" >"$L/tests.txt"
		rc=$rc1
		[ "$rc" = 0 ] && rc=$rc2
		end tests "$rc"
	fi

	# --- The step benchmark. ---------------------------------------------------
	median_pairs() { # median pairs/s of BenchmarkGPUTrainStep/$1 in bench.txt
		grep -E "^BenchmarkGPUTrainStep/$1(-[0-9]+)?[[:space:]]" "$L/bench.txt" | sed -n 's/.*[[:space:]]\([0-9.e+]*\) pairs\/s.*/\1/p' | sort -g |
			awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
	}
	if has bench; then
		begin bench
		say "$BENCH_PATTERN: -benchtime ${BENCH_STEPS}x -count $BENCH_COUNT on cuda:$DEV"
		(cd "$W/gopath" && PARASTREAM_BENCH_DEVICE=cuda:$DEV TO "$W/bin/cuda.test" \
			-test.run '^$' -test.bench "$BENCH_PATTERN" -test.benchtime "${BENCH_STEPS}x" -test.count "$BENCH_COUNT") >"$L/bench.txt" 2>&1
		rc=$?
		if [ "$rc" = 0 ] && [ -n "$BENCH_TF32" ] && [ "$FULL" = 0 ]; then
			# PyTorch lets cuDNN use TF32 by default: parastream's --tf32 beside it.
			encs=$(echo $BENCH_TF32 | tr ' ' '|')
			(cd "$W/gopath" && PARASTREAM_BENCH_DEVICE=cuda:$DEV TO "$W/bin/cuda.test" -test.run '^$' \
				-test.bench "BenchmarkGPUGraphs/^graphs\+tf32\$/^($encs)\$" -test.benchtime "${BENCH_STEPS}x") >>"$L/bench.txt" 2>&1
			rc=$?
		fi
		cat "$L/bench.txt"
		if ! grep -q 'pairs/s' "$L/bench.txt"; then
			fail "bench: BenchmarkGPUTrainStep (exit $rc, no pairs/s: see bench.txt)"
		else
			for k in avg/batch100 lstmavg/batch100 gran/batch100 transformer/batch100 avg/batch1000 lstmavg/batch1000 gran/batch1000 transformer/batch1000; do
				v=$(median_pairs "$k")
				if [ -n "$v" ]; then figure bench "$k: $v pairs/s (median of $BENCH_COUNT, ${BENCH_STEPS} steps)"; else fail "bench: no row $k"; fi
			done
			while read -r name v; do figure bench "${name#graphs+tf32/} with --tf32: $v pairs/s"; done < <(
				sed -n 's#^BenchmarkGPUGraphs/\(graphs+tf32/[a-z0-9]*/batch[0-9]*\)-*[0-9]*[[:space:]].*[[:space:]]\([0-9.e+]*\) pairs/s.*#\1 \2#p' "$L/bench.txt")
		fi
		end bench "$rc"
	fi

	# --- PyTorch beside it. ----------------------------------------------------
	if has torch; then
		begin torch
		if [ -s "$L/bench.txt" ] && grep -q 'pairs/s' "$L/bench.txt"; then
			src=(--go-output "$L/bench.txt")
		else
			src=(--go-test-binary "$W/bin/cuda.test")
		fi
		say "scripts/gpu_bench.py: variants $TORCH_VARIANTS, $TORCH_STEPS steps each"
		(cd "$W/gopath" && PYTHONUNBUFFERED=1 TO "$PY" "$W/pkg/scripts/gpu_bench.py" --device "cuda:$DEV" --steps "$TORCH_STEPS" \
			--models "$TORCH_MODELS" --variants "$TORCH_VARIANTS" "${src[@]}") >"$L/torch.txt" 2>&1
		rc=$?
		cat "$L/torch.txt"
		while IFS= read -r l; do figure torch "$l"; done < <(grep -E '^(avg|lstmavg|gran|transformer)/batch' "$L/torch.txt")
		if [ "$rc" != 0 ]; then
			fail "torch: scripts/gpu_bench.py (exit $rc): see torch.txt"
		elif grep -qE 'BELOW 1.0|NO RATIO' "$L/torch.txt"; then
			fail "torch: parastream below the strongest PyTorch variant in: $(grep -E 'BELOW 1.0|NO RATIO' "$L/torch.txt" | cut -d' ' -f1 | paste -sd' ' -)"
		fi
		end torch "$rc"
	fi

	# --- End to end from the embedded broker. ----------------------------------
	if has e2e; then
		while kill -0 "$PREP" 2>/dev/null && [ "$(date +%s)" -lt "$((PREP_END + 10))" ]; do sleep 1; done
		if kill -0 "$PREP" 2>/dev/null; then
			kill "$PREP" 2>/dev/null
			echo "the data was not ready within its time limit ($(budget prep) s from the start)" >>"$D/prep.txt"
		fi
		wait "$PREP"
		prc=$?
		say "the end-to-end run's data: exit $prc, $(($(date +%s) - T1)) s after the start"
		begin e2e
		(
			set -e
			cat "$D/prep.txt"
			[ "$prc" = 0 ] || { echo "preparing the data failed (exit $prc)"; exit 1; }
			corpus=$(cat "$D/corpus")
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
			TO "$P" train --brokers "$addr" --topic-prefix gb --dataset "$corpus" --model avg --device "$E2E_DEVICE" \
				--checkpoint-every "$E2E_EVERY" --keep-checkpoints 2 --max-steps "$E2E_STEPS" --epochs 1000 \
				--checkpoint-dir "$D/ck" --run gpu-bundle-avg --progress-every 5s --cpuprofile "$L/e2e.pprof"
			last=$(find "$D/ck" -maxdepth 1 -name 'step-*' -type d | sort | tail -1)
			"$PY" - "$last" <<-'EOF'
				import json, os, sys
				d = sys.argv[1]
				c = json.load(open(os.path.join(d, "config.json")))
				t = json.load(open(os.path.join(d, "trainer.json")))
				print(f"vocabulary: {c.get('vocab')} rows of the embedding table (words, special tokens, out-of-vocabulary buckets); "
				      f"checkpoint {d}: step {t.get('step')}, backend {t.get('backend')}")
			EOF
		) >"$L/e2e.txt" 2>&1
		rc=$?
		grep -v '^train .*: step [0-9]* epoch' "$L/e2e.txt" | tail -30
		grep '^train .*: step [0-9]* epoch' "$L/e2e.txt" | tail -3
		eps=$(sed -n 's/^run .* \([0-9][0-9]*\) examples\/s on .*/\1/p' "$L/e2e.txt" | tail -1)
		if [ "$rc" != 0 ] || [ -z "$eps" ]; then
			fail "e2e: the end-to-end run (exit $rc): see e2e.txt"
		else
			figure e2e "$(grep '^vocabulary:' "$L/e2e.txt" | cut -d' ' -f2) embedding rows, $eps examples/s (avg, --device $E2E_DEVICE, $E2E_STEPS steps, checkpoints every $E2E_EVERY steps)"
			# Where the loop's time went besides its steps (train's last line
			# but one): what to fix when the ratio below is short.
			waits=$(sed -n 's/^run .*: \(of [0-9.]* s, the loop waited .*\)$/\1/p' "$L/e2e.txt" | tail -1)
			[ -n "$waits" ] && figure e2e "$waits"
			step=""
			has bench && [ -s "$L/bench.txt" ] && step=$(median_pairs avg/batch100)
			if [ -n "$step" ]; then
				verdict=$(awk -v e="$eps" -v s="$step" 'BEGIN { r = e / s; printf "%.2f %s", r, (r >= 0.8 ? "ok (>= 0.8)" : "BELOW 0.8") }')
				figure e2e "$eps examples/s end to end, $step pairs/s in the step benchmark (avg/batch100), ratio $verdict"
				case $verdict in *BELOW*) fail "e2e: end to end below 0.8 x the step benchmark" ;; esac
			else
				figure e2e "no avg/batch100 step rate in this run (bench not run, or it failed): no ratio"
			fi
		fi
		end e2e "$rc"
	fi
	[ -n "${PREP:-}" ] && kill "$PREP" 2>/dev/null

	# --- Where a step's time goes. ---------------------------------------------
	if has profile; then
		begin profile
		(
			cd "$W/gopath" || exit 1
			# One run for every row: the encoders' and the batches' cross product
			# (-test.bench matches each level of a name on its own).
			encs=$(for r in $PROFILE_ROWS; do echo "${r%%/*}"; done | sort -u | paste -sd'|' -)
			bats=$(for r in $PROFILE_ROWS; do echo "${r#*/}"; done | sort -u | paste -sd'|' -)
			echo "== the host's side: go test -cpuprofile, $PROFILE_STEPS steps of each of $PROFILE_ROWS (go tool pprof -top profile.pprof)"
			PARASTREAM_BENCH_DEVICE=cuda:$DEV TO "$W/bin/cuda.test" -test.run '^$' -test.bench "BenchmarkGPUTrainStep/^($encs)\$/^($bats)\$" \
				-test.benchtime "${PROFILE_STEPS}x" -test.cpuprofile "$L/profile.pprof" || exit 1
			ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
			if [ -z "$ncu" ]; then
				echo "no ncu (Nsight Compute) on this machine: no kernel times"
				exit 0
			fi
			for r in $PROFILE_ROWS; do
				echo "== the device's side: $ncu, the first $NCU_LAUNCHES kernel launches of $r (warm-up steps: eager, then captured)"
				TO "$ncu" --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv --launch-count "$NCU_LAUNCHES" \
					--log-file "$W/ncu.csv" "$W/bin/cuda.test" -test.run '^$' -test.bench "BenchmarkGPUTrainStep/^${r%%/*}\$/^${r#*/}\$" -test.benchtime 10x >/dev/null 2>&1
				echo "ncu exit $?"
				"$PY" - "$W/ncu.csv" <<-'EOF'
					import collections, csv, sys
					scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3, "second": 1e6, "s": 1e6}
					lines = [l for l in open(sys.argv[1], errors="replace") if l.startswith('"')]
					rows = list(csv.DictReader(lines))
					tot, n = collections.defaultdict(float), collections.Counter()
					for r in rows:
					    if r.get("Metric Name") != "gpu__time_duration.sum":
					        continue
					    name = r.get("Kernel Name", "?").split("(")[0]
					    tot[name] += float(r["Metric Value"].replace(",", "")) * scale.get(r.get("Metric Unit", "ns"), 1e-3)
					    n[name] += 1
					if not tot:
					    print("no kernel times in ncu's output:")
					    print("".join(open(sys.argv[1], errors="replace").readlines()[-20:]))
					    sys.exit(1)
					all_us = sum(tot.values())
					print(f"{sum(n.values())} launches, {all_us:.0f} us on the device in all")
					print(f"{'kernel':<28} {'launches':>8} {'total us':>10} {'mean us':>9} {'share':>6}")
					for k in sorted(tot, key=tot.get, reverse=True):
					    print(f"{k:<28} {n[k]:>8} {tot[k]:>10.1f} {tot[k] / n[k]:>9.2f} {100 * tot[k] / all_us:>5.1f}%")
				EOF
			done
		) >"$L/profile.txt" 2>&1
		rc=$?
		cat "$L/profile.txt"
		for r in $PROFILE_ROWS; do
			v=$(grep -E "^BenchmarkGPUTrainStep/$r(-[0-9]+)?[[:space:]]" "$L/profile.txt" | sed -n 's/.*[[:space:]]\([0-9.e+]*\) pairs\/s.*/\1/p' | head -1)
			if [ -n "$v" ]; then figure profile "$r: $v pairs/s under the CPU profiler ($PROFILE_STEPS steps)"; else fail "profile: no row $r"; fi
		done
		# Each row's device time and its six costliest kernels.
		while IFS= read -r l; do figure profile "$l"; done < <(awk '/^== the device/ { n = -1; print; next } /launches, .* us on the device/ { print; next }
			/^kernel  / { n = 0; next } n >= 0 && n < 6 && NF == 5 { print "  " $0; n++ }' "$L/profile.txt")
		[ "$rc" = 0 ] || fail "profile: exit $rc: see profile.txt"
		end profile "$rc"
	fi

	echo
	say "stages ran in $(($(date +%s) - T1)) s after unpacking"
	report
	cat "$RES/report.md"
	[ ! -s "$REC.failed" ]
}

# jstr S: S as a JSON string.
jstr() { printf '"%s"' "$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/ /g')"; }

# report: report.md and report.json from the records.
report() {
	local total=$(($(date +%s) - T0)) st
	{
		echo "# parastream GPU bundle: $([ -s "$REC.failed" ] && echo FAILED || echo all stages passed)"
		echo
		[ -f "$B/MANIFEST" ] && sed -n '2,5p' "$B/MANIFEST" | sed 's/^/- /'
		echo "- run: $(date -u +%Y-%m-%dT%H:%M:%SZ), stages: $STAGES$([ "$FULL" = 1 ] && echo ' (full)'), $total s in all (unpacking included)"
		echo
		echo "| stage | status | seconds | budget (s) |"
		echo "|---|---|---|---|"
		while IFS=$'\t' read -r n st sec bud; do echo "| $n | $st | $sec | $bud |"; done <"$REC.stages"
		[ -s "$REC.stages" ] || echo "| (none ran) | | | |"
		echo
		while IFS=$'\t' read -r n f; do echo "- $n: $f"; done <"$REC.figures"
		if [ -s "$REC.failed" ]; then
			echo
			sed 's/^/FAILED: /' "$REC.failed"
		fi
	} >"$RES/report.md"
	{
		printf '{"passed": %s, "stages_run": %s, "full": %s, "seconds": %s,\n "stages": [' \
			"$([ -s "$REC.failed" ] && echo false || echo true)" "$(jstr "$STAGES")" "$([ "$FULL" = 1 ] && echo true || echo false)" "$total"
		sep=""
		while IFS=$'\t' read -r n st sec bud; do
			printf '%s\n  {"stage": %s, "status": %s, "seconds": %s, "budget_s": %s, "figures": [' "$sep" "$(jstr "$n")" "$(jstr "$st")" "$sec" "$bud"
			fs=""
			while IFS=$'\t' read -r m f; do [ "$m" = "$n" ] && printf '%s%s' "$fs" "$(jstr "$f")" && fs=", "; done <"$REC.figures"
			printf ']}'
			sep=","
		done <"$REC.stages"
		printf '],\n "failures": ['
		fs=""
		while IFS= read -r f; do printf '%s%s' "$fs" "$(jstr "$f")"; fs=", "; done <"$REC.failed"
		printf ']}\n'
	} >"$RES/report.json"
}

main 2>&1 | tee "$L/run.log"
rc=${PIPESTATUS[0]}
tar -C "$L" -czf "$RES/logs.tar.gz" . && rm -rf "$L"
exit "$rc"
