#!/usr/bin/env bash
# The memory figure of every long-running command (`make bench-mem`; issue
# 24, item 3): each command's peak RSS beside the bytes of data it handles,
# and PyTorch's peak RSS where the command has a peer. Every command runs
# under scripts/peakrss.sh (VmRSS and VmHWM from /proc/PID/status every half
# second; its watchdog at $MEM_BENCH_LIMIT_MB) under GNU time, whose maximum
# resident set size (the kernel's peak, read when the command ends) is the
# figure; without GNU time, the last VmHWM peakrss.sh saw.
#
#  1. A synthetic corpus: `parastream gen quora --rows $MEM_BENCH_ROWS`,
#     extracted, then featurized (vocabulary fitted on its train split) with
#     STS 2012-2015 and the STS Benchmark dev set in the same directory.
#  2. `parastream broker` (a data directory, a free port) holding its
#     featurized Quora shards: `publish`, then `consume` of the train split
#     (every row, one epoch), then a short `train` of avg (checkpoints
#     announced on the broker), then `eval watch` evaluating those
#     checkpoints on STS, STSb dev and the corpus's test split (retrieval),
#     stopped with SIGTERM once it has written a result part for each.
#     The broker's RSS is read once after `publish` (holding the shards) and
#     its peak when it is stopped at the end.
#  3. The Quora sample of ../shared/data, extracted and featurized as
#     scripts/parity.sh does, published to a second broker: `parastream
#     train` of each of $MEM_BENCH_MODELS at each of $MEM_BENCH_BATCHES for
#     $MEM_BENCH_EPOCHS epochs at dim $MEM_BENCH_DIM (default flags, so the
#     CPU backend's default --memory-budget; a run it refuses, the graph of
#     a batch being larger, runs again with --memory-budget
#     $MEM_BENCH_RETRY_BUDGET, and the table says so), and PyTorch's peer: the
#     reference trainer of `make parity` (scripts/parity.py, issue 13) in
#     its own-order mode (b), from the parastream run's step-0 checkpoint
#     (the same model, batch, dimension, vocabulary and initial parameters),
#     over the same rows for the same number of epochs.
#
# One table, printed and written to $MEM_BENCH_OUT/mem.md and mem.json.
#
# Settings (environment):
#   MEM_BENCH_ROWS        rows of the synthetic corpus             (1000000)
#   MEM_BENCH_MODELS      encoders trained on the Quora sample     (avg lstmavg gran;
#                         empty: none, the corpus's commands only)
#   MEM_BENCH_BATCHES     batch sizes                              (100 1000)
#   MEM_BENCH_RETRY_BUDGET  --memory-budget of a run the default
#                         budget refuses (empty: no second run)    (8GiB)
#   MEM_BENCH_EPOCHS      epochs of those runs                     (2)
#   MEM_BENCH_DIM         word and LSTM dimension                  (300)
#   MEM_BENCH_EVAL_STEPS  steps of the avg run whose checkpoints
#                         eval watch evaluates (one every half)    (200)
#   MEM_BENCH_TORCH_THREADS  torch threads of the reference        (1, as make parity)
#   MEM_BENCH_LIMIT_MB    peakrss.sh's watchdog: a command whose
#                         RSS passes it is killed                  (12000)
#   MEM_BENCH_OUT         where mem.md and mem.json go             (out/bench)
#   MEM_BENCH_DATA        the shared data                          (../shared/data)
#   MEM_BENCH_PYTHON      a python3 with torch and numpy           (/usr/bin/python3)
#   MEM_BENCH_WORK        work directory, kept (default: a temporary one, removed)
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${MEM_BENCH_ROWS:-1000000}
MODELS=${MEM_BENCH_MODELS-avg lstmavg gran}
BATCHES=${MEM_BENCH_BATCHES:-100 1000}
RETRY_BUDGET=${MEM_BENCH_RETRY_BUDGET-8GiB}
EPOCHS=${MEM_BENCH_EPOCHS:-2}
DIM=${MEM_BENCH_DIM:-300}
EVAL_STEPS=${MEM_BENCH_EVAL_STEPS:-200}
TORCH_THREADS=${MEM_BENCH_TORCH_THREADS:-1}
LIMIT_MB=${MEM_BENCH_LIMIT_MB:-12000}
OUT=${MEM_BENCH_OUT:-out/bench}
DATA=${MEM_BENCH_DATA:-../shared/data}
PY=${MEM_BENCH_PYTHON:-/usr/bin/python3}
BIN=./parastream
NICE="nice -n 10"

say() { printf '%s mem_bench: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { say "$*"; exit 1; }

# A python3 for the tables (any; torch only for the reference).
TPY=""
for p in python3 /usr/bin/python3 "$PY"; do
	if command -v "$p" >/dev/null 2>&1; then TPY=$p; break; fi
done
[ -n "$TPY" ] || die "no python3: it writes the tables"
torch_missing=""
if ! "$PY" -c 'import torch, numpy' >/dev/null 2>&1; then
	torch_missing="not installed (apt-get install python3-torch)"
	say "$PY has no torch (or numpy): the PyTorch column says so (Debian: apt-get install python3-torch)"
fi
sample="$DATA/corpora/quora/quora_duplicate_questions.sample.tsv"
[ -e "$sample" ] || die "$sample is missing: the bench reads the shared data ($DATA; set MEM_BENCH_DATA)"
[ -d "$DATA/eval/sts" ] || die "$DATA/eval/sts is missing: eval watch needs the STS sets"

started=$(date +%s)
load_start=$(uptime)
say "building $BIN"
CGO_ENABLED=0 $NICE make build >/dev/null

if [ -n "${MEM_BENCH_WORK:-}" ]; then
	mkdir -p "$MEM_BENCH_WORK"
	W=$(cd "$MEM_BENCH_WORK" && pwd)
	keep=1
else
	W=$(mktemp -d "${TMPDIR:-/tmp}/mem_bench.XXXXXX")
	keep=0
fi
mkdir -p "$OUT"

# Background processes of ours: their peakrss.sh pids.
bg_pids=()
# A function's bare `return` in a trap returns the status from before the
# trap: child_ps returns 0 explicitly, and cleanup runs without -e.
cleanup() {
	set +e
	local p c
	for p in "${bg_pids[@]}"; do
		c=$(child_ps "$p")
		[ -z "$c" ] || kill "$c" 2>/dev/null || true
	done
	for p in "${bg_pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	[ "$keep" = 1 ] || rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'say "stopped by a failure at line $LINENO"' ERR

rows_tsv="$W/rows.tsv"
: >"$rows_tsv"
# row COMMAND INPUT BYTES PS_KIB PS_SAMPLED_KIB PS_S TORCH_KIB TORCH_S NOTE
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$rows_tsv"; }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
filebytes() { du -sb "$@" | awk '{ s += $1 } END { print s + 0 }'; }
# shardbytes DIR [CORPUS [SPLIT...]]: the bytes of the shards of DIR's
# manifest (of CORPUS, of its SPLITs).
shardbytes() {
	"$TPY" - "$@" <<-'EOF'
		import json, sys
		m = json.load(open(sys.argv[1] + "/manifest.json"))
		corpus, splits = (sys.argv[2:3] or [None])[0], sys.argv[3:]
		print(sum(f["bytes"] for f in m["files"] if corpus in (None, f["corpus"]) and (not splits or f["split"] in splits)))
	EOF
}
# GNU time, where it is, gives the exact peak: the kernel's largest RSS in
# the process tree under it (ru_maxrss), when the command ends.
# peakrss.sh samples every half second, so it misses the last moments of a
# command, and a command shorter than that entirely; its figures are kept
# beside, and it is the watchdog.
GNUTIME=""
if /usr/bin/time --version 2>&1 | grep -q GNU; then GNUTIME=/usr/bin/time; fi
# runner NAME: the command line prefix that measures NAME, in R.
runner() {
	R=($NICE)
	[ -z "$GNUTIME" ] || R+=("$GNUTIME" -f %M -o "$W/$1.time")
	R+=(scripts/peakrss.sh --limit-mb "$LIMIT_MB" --every 0.5 --)
}
# collect NAME: hwm (MiB: GNU time's peak, else peakrss.sh's last VmHWM) and
# sampled (peakrss.sh's largest sampled VmRSS) of NAME's run.
collect() {
	local t=""
	hwm="" sampled=""
	read -r hwm sampled <<<"$(sed -n 's/^peakrss: peak sampled RSS \([0-9]*\) MiB, VmHWM \([0-9]*\) MiB.*/\2 \1/p' "$W/$1.err" | tail -1)" || true
	[ ! -s "$W/$1.time" ] || t=$(awk '/^[0-9]+$/ { v = $1 } END { print v }' "$W/$1.time")
	if [ -n "$t" ]; then
		t=$((t / 1024))
		if [ -z "$hwm" ] || [ "$t" -gt "$hwm" ]; then hwm=$t; fi
	fi
}
# child_ps PID: the parastream process under PID (nice, time, peakrss.sh).
child_ps() {
	local c f
	for c in $(pgrep -P "$1" || true); do
		if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = parastream ]; then
			echo "$c"
			return 0
		fi
		f=$(child_ps "$c")
		if [ -n "$f" ]; then
			echo "$f"
			return 0
		fi
	done
}

# measure NAME COMMAND...: runs COMMAND measured (stdout to $W/NAME.out,
# stderr to $W/NAME.err) and sets hwm, sampled (MiB) and secs.
measure() {
	local name=$1
	shift
	local t0 t1 rc=0
	runner "$name"
	t0=$(now)
	"${R[@]}" "$@" >"$W/$name.out" 2>"$W/$name.err" || rc=$?
	t1=$(now)
	secs=$(elapsed "$t0" "$t1")
	collect "$name"
	if [ "$rc" -ne 0 ]; then
		say "$name failed (exit $rc): $(errtail "$W/$name.err" 5)"
		return "$rc"
	fi
	say "$name: peak RSS ${hwm} MiB (sampled ${sampled}), ${secs} s"
}

# start_broker NAME: a broker, measured, on a free port; sets broker_pp
# (the measuring process's pid), broker_pid (the broker's) and addr.
start_broker() {
	local name=$1
	runner "$name"
	"${R[@]}" "$BIN" broker --listen 127.0.0.1:0 --data-dir "$W/$name.data" >"$W/$name.out" 2>"$W/$name.err" &
	broker_pp=$!
	bg_pids+=("$broker_pp")
	addr=""
	for _ in $(seq 100); do
		addr=$(sed -n 's/^broker listening on \([^ ]*\).*/\1/p' "$W/$name.out")
		[ -n "$addr" ] && break
		kill -0 "$broker_pp" 2>/dev/null || die "the broker stopped: $(cat "$W/$name.out" "$W/$name.err")"
		sleep 0.1
	done
	[ -n "$addr" ] || die "the broker gave no address in 10 s"
	broker_pid=$(child_ps "$broker_pp")
	[ -n "$broker_pid" ] || die "no broker process under $broker_pp"
	say "$name on $addr (pid $broker_pid)"
}
# stop PID NAME: SIGTERM to the parastream command under PID (a background
# measured command), then wait for it; sets hwm and sampled.
stop() {
	local pp=$1 name=$2 pid rc=0
	pid=$(child_ps "$pp")
	[ -z "$pid" ] || kill -TERM "$pid"
	wait "$pp" || rc=$?
	[ "$rc" -eq 0 ] || say "$name: exit $rc ($(errtail "$W/$name.err" 3))"
	local keep_pids=() p
	for p in "${bg_pids[@]}"; do [ "$p" = "$pp" ] || keep_pids+=("$p"); done
	bg_pids=("${keep_pids[@]}")
	collect "$name"
}
# errtail FILE N: the last N lines of a command's stderr, less peakrss.sh's.
errtail() { grep -v '^peakrss:' "$1" 2>/dev/null | tail -"$2" || true; }
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# ---------------------------------------------------------------------------
# 0. The floor: what the binary takes to start (package initialisation).
measure version "$BIN" version
row "version" "nothing: the RSS of starting the binary" 0 "$hwm" "$sampled" "$secs" "" "" "the floor under every command below: mostly the binary's own pages"

# 1. The synthetic corpus.
say "synthetic corpus: $ROWS Quora rows"
measure gen "$BIN" gen quora --rows "$ROWS" --out "$W/synth.tsv"
tsv_bytes=$(filebytes "$W/synth.tsv")
row "gen quora" "$ROWS rows written (TSV)" "$tsv_bytes" "$hwm" "$sampled" "$secs" "" "" ""

measure extract "$BIN" extract --corpus quora --input "$W/synth.tsv" --out "$W/raw" --quiet
row "extract --corpus quora" "the $ROWS-row TSV" "$tsv_bytes" "$hwm" "$sampled" "$secs" "" "" ""
$NICE "$BIN" extract --corpus sts --input "$DATA/eval/sts/201[2-5]/STS.input.*.txt" --out "$W/raw" --quiet >/dev/null
$NICE "$BIN" extract --corpus stsb --input "$DATA/eval/stsbenchmark/sts-dev.csv" --out "$W/raw" --quiet >/dev/null

measure featurize "$BIN" featurize --in "$W/raw" --out "$W/feat" --corpora quora --quiet
row "featurize --corpora quora" "extracted shards (the corpus, STS, STSb dev)" "$(shardbytes "$W/raw")" "$hwm" "$sampled" "$secs" "" "" ""
feat_bytes=$(shardbytes "$W/feat" quora)
rm -f "$W/synth.tsv"

# ---------------------------------------------------------------------------
# 2. Broker, publish, consume, eval watch on the corpus.
start_broker broker
P=mem
measure publish "$BIN" publish --shards "$W/feat" --brokers "$addr" --topic-prefix "$P" --dataset quora --quiet
row "publish" "featurized shards of the corpus (every split)" "$feat_bytes" "$hwm" "$sampled" "$secs" "" "" ""
held_rss=$(status_kib "$broker_pid" VmRSS)
held_hwm=$(status_kib "$broker_pid" VmHWM)
held_anon=$(status_kib "$broker_pid" RssAnon)
data_dir_bytes=$(filebytes "$W/broker.data")
say "broker after publish: VmRSS $((held_rss / 1024)) MiB ($((held_anon / 1024)) MiB of it anonymous), VmHWM $((held_hwm / 1024)) MiB; data directory $data_dir_bytes bytes"

measure consume "$BIN" consume --brokers "$addr" --topic-prefix "$P" --dataset quora --n 0 --quiet --group mem-consume
consumed_mb=$(sed -n 's/.* messages, \([0-9.]*\) MB, lag.*/\1/p' "$W/consume.err" | tail -1)
consumed_rows=$(sed -n 's/^[^:]*: \([0-9]*\) rows (epoch.*/\1/p' "$W/consume.err" | tail -1)
train_bytes=$(shardbytes "$W/feat" quora train)
row "consume (train split, every row, 1 epoch)" "$consumed_rows rows, $consumed_mb MB of messages" "$train_bytes" "$hwm" "$sampled" "$secs" "" "" ""

# A short avg run announces the checkpoints eval watch evaluates.
every=$((EVAL_STEPS / 2))
[ "$every" -ge 1 ] || every=1
measure train-corpus "$BIN" train --brokers "$addr" --topic-prefix "$P" --dataset quora --model avg --dim "$DIM" \
	--max-steps "$EVAL_STEPS" --checkpoint-every "$every" --checkpoint-dir "$W/ck-corpus" --run mem-corpus-avg --quiet
row "train avg (checkpoints for eval watch)" "$EVAL_STEPS steps of batch 100 from the corpus's train split" "$train_bytes" \
	"$hwm" "$sampled" "$secs" "" "" "not a comparison: the source of the checkpoints below"
nck=$(find "$W/ck-corpus" -maxdepth 1 -name 'step-*' -type d | wc -l)
# What eval reads of a checkpoint: all but Adam's moments.
ck_bytes=$(find "$W/ck-corpus" -type f ! -name optimizer.safetensors -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')

eval_bytes=$(($(shardbytes "$W/feat" sts) + $(shardbytes "$W/feat" stsb) + $(shardbytes "$W/feat" quora test)))
t0=$(now)
runner eval-watch
"${R[@]}" "$BIN" eval watch --brokers "$addr" --topic-prefix "$P" \
	--group mem-eval --eval "$W/feat" --out "$W/results" -v >"$W/eval-watch.out" 2>"$W/eval-watch.err" &
watch_pp=$!
bg_pids+=("$watch_pp")
say "eval watch: waiting for $nck evaluations"
deadline=$(($(date +%s) + 3600))
while :; do
	# Logged once the evaluation's part, CSV, report and plots are written.
	n=$(cat "$W/eval-watch.out" "$W/eval-watch.err" | grep -c 'evaluated announced checkpoint' || true)
	[ "$n" -ge "$nck" ] && break
	kill -0 "$watch_pp" 2>/dev/null || die "eval watch stopped: $(cat "$W/eval-watch.out" "$W/eval-watch.err")"
	[ "$(date +%s)" -lt "$deadline" ] || die "eval watch: $n of $nck evaluations after an hour"
	sleep 1
done
stop "$watch_pp" eval-watch
secs=$(elapsed "$t0" "$(now)")
say "eval watch: peak RSS ${hwm} MiB (sampled ${sampled}), ${secs} s"
row "eval watch" "$nck avg checkpoints on STS 2012-2015, STSb dev and the corpus's test split (retrieval)" \
	"$((eval_bytes + ck_bytes))" "$hwm" "$sampled" "$secs" "" "" \
	"bytes: evaluation shards $eval_bytes B, checkpoints (model, vocabulary, configuration) $ck_bytes B"

stop "$broker_pp" broker
row "broker, after publish" "featurized shards of the corpus held (data directory $data_dir_bytes B)" "$feat_bytes" \
	"$((held_hwm / 1024))" "$((held_rss / 1024))" "" "" "" "VmHWM then; VmRSS $((held_rss / 1024)) MiB, $((held_anon / 1024)) MiB of it anonymous (the rest the binary's pages)"
row "broker, whole run" "the same, serving publish, consume, train and eval watch" "$feat_bytes" \
	"$hwm" "$sampled" "" "" "" ""

# ---------------------------------------------------------------------------
# 3. Training on the Quora sample, beside PyTorch.
say "the Quora sample: extract, featurize, publish"
$NICE "$BIN" extract --corpus quora --input "$sample" --out "$W/qraw" --quiet >/dev/null
$NICE "$BIN" featurize --in "$W/qraw" --out "$W/qfeat" --corpora quora --quiet >/dev/null
start_broker qbroker
Q=memq
$NICE "$BIN" publish --shards "$W/qfeat" --brokers "$addr" --topic-prefix "$Q" --quiet >/dev/null
q_train_bytes=$(shardbytes "$W/qfeat" quora train)
qrows="$W/qrows.jsonl"
$NICE "$BIN" consume --brokers "$addr" --topic-prefix "$Q" --dataset quora --n 0 --shuffle-buffer 1 \
	--group mem-dump >"$qrows" 2>"$W/qdump.err" || die "consume: $(cat "$W/qdump.err")"
q_rows=$(wc -l <"$qrows")
say "$q_rows Quora sample train rows"

# train_run NAME FLAGS...: parastream train of the cell NAME, measured.
train_run() {
	local name=$1
	shift
	rm -rf "$W/ck-$name"
	measure "train-$name" "$BIN" train --brokers "$addr" --topic-prefix "$Q" --dataset quora --model "$enc" \
		--epochs "$EPOCHS" --batch "$batch" --dim "$DIM" --seed 1 --run "mem-$name" \
		--checkpoint-dir "$W/ck-$name" --checkpoint-every 100000000 --save-initial --quiet "$@"
}
for enc in $MODELS; do
	for batch in $BATCHES; do
		name="$enc-b$batch"
		input="Quora sample, $q_rows rows x $EPOCHS epochs, dim $DIM"
		note=""
		if ! train_run "$name"; then
			err="$W/train-$name.err"
			if [ -z "$RETRY_BUDGET" ] || ! grep -q -- 'give a larger --memory-budget' "$err"; then
				row "train $enc --batch $batch" "$input" "$q_train_bytes" "$hwm" "$sampled" "$secs" "" "" \
					"failed: $(errtail "$err" 1)"
				continue
			fi
			# The default budget refused a batch's graph: again with a larger one.
			budget=$(sed -n 's/^train: memory budget \([^ ]* [KMG]iB\).*/\1/p' "$err" | head -1)
			graph=$(sed -n 's/.*the graph for \([0-9]* rows of [0-9]* steps needs [^ ]* [KMG]iB\).*/\1/p' "$err" | head -1)
			note="the default --memory-budget ($budget) refused it (the graph for $graph; refused after ${secs} s at ${hwm} MiB): run with --memory-budget $RETRY_BUDGET"
			say "train-$name: $note"
			mv "$err" "$W/train-$name.refused.err"
			if ! train_run "$name" --memory-budget "$RETRY_BUDGET"; then
				row "train $enc --batch $batch" "$input" "$q_train_bytes" "$hwm" "$sampled" "$secs" "" "" \
					"$note; failed: $(errtail "$err" 1)"
				continue
			fi
		fi
		ps_hwm=$hwm ps_sampled=$sampled ps_secs=$secs
		t_rss="$torch_missing" t_secs=""
		if [ -z "$torch_missing" ]; then
			trc=0
			measure "torch-$name" "$PY" scripts/parity.py --rows "$qrows" --init "$W/ck-$name/step-00000000" \
				--epochs "$EPOCHS" --seed 1 --threads "$TORCH_THREADS" --out "$W/ref-$name" --quiet || trc=$?
			if [ "$trc" -eq 0 ]; then
				t_rss=$hwm t_secs=$secs
				note="${note:+$note; }PyTorch: scripts/parity.py mode (b), $TORCH_THREADS thread(s), $(sed -n 's/^parity.py: \([0-9]*\) steps.*/\1/p' "$W/torch-$name.out") steps"
			else
				t_rss="failed" note="${note:+$note; }PyTorch: scripts/parity.py exit $trc after $secs s: $(errtail "$W/torch-$name.err" 1)"
			fi
			rm -rf "$W/ref-$name"
		fi
		row "train $enc --batch $batch" "$input" "$q_train_bytes" "$ps_hwm" "$ps_sampled" "$ps_secs" "$t_rss" "$t_secs" "$note"
		rm -rf "$W/ck-$name"
	done
done
stop "$broker_pp" qbroker

# ---------------------------------------------------------------------------
load_end=$(uptime)
"$TPY" - "$rows_tsv" "$OUT/mem.md" "$OUT/mem.json" "$ROWS" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	"$load_start" "$load_end" "$(git describe --always --dirty 2>/dev/null || echo unknown)" \
	"$(nproc) cores, $(awk '/^MemTotal:/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)" "$(($(date +%s) - started))" \
	"${GNUTIME:+gnu-time}" <<-'EOF'
	import json, sys
	tsv, md_path, json_path, rows_n, date, load0, load1, version, box, total, method = sys.argv[1:]
	method = ("GNU time's maximum resident set size (ru_maxrss, the kernel's peak)" if method
	          else "the last VmHWM scripts/peakrss.sh read (no GNU time here: a command's last half second is missed)")

	def human(n):
	    n = float(n)
	    for unit in ("B", "KiB", "MiB", "GiB"):
	        if n < 1024 or unit == "GiB":
	            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
	        n /= 1024

	def num(s):
	    try:
	        return float(s)
	    except ValueError:
	        return None

	rows = []
	for line in open(tsv):
	    f = line.rstrip("\n").split("\t")
	    cmd, inp, nbytes, ps, ps_sampled, ps_s, t, t_s, note = f
	    rows.append({
	        "command": cmd, "input": inp, "data_bytes": int(nbytes),
	        "parastream_peak_rss_mib": num(ps), "parastream_peak_sampled_rss_mib": num(ps_sampled),
	        "parastream_wall_s": num(ps_s),
	        "pytorch_peak_rss_mib": num(t), "pytorch_note": t if t and num(t) is None else "",
	        "pytorch_wall_s": num(t_s), "note": note,
	    })
	head = ["command", "input", "data bytes", "parastream peak RSS", "PyTorch peak RSS", "ratio", "wall time (parastream / PyTorch)", "note"]
	out = [f"# Peak RSS of parastream's long-running commands (make bench-mem)", "",
	       f"{date}, {version}, {box}; {total} s in all. Load at the start: {load0.strip()}; at the end: {load1.strip()}.",
	       f"Synthetic corpus: {int(rows_n):,} generated Quora rows. Peak RSS: {method}; MiB = 2^20 bytes.", "",
	       "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
	for r in rows:
	    ps, t = r["parastream_peak_rss_mib"], r["pytorch_peak_rss_mib"]
	    ps_txt = f"{ps:,.0f} MiB" if ps is not None else "failed"
	    if t is not None:
	        t_txt, ratio = f"{t:,.0f} MiB", (f"{ps / t:.2f}" if ps is not None and t else "")
	    else:
	        t_txt, ratio = (r["pytorch_note"] or "no peer"), ""
	    r["ratio"] = round(ps / t, 3) if ps is not None and t else None
	    w = f"{r['parastream_wall_s']:.1f} s" if r["parastream_wall_s"] is not None else ""
	    if r["pytorch_wall_s"] is not None:
	        w += f" / {r['pytorch_wall_s']:.1f} s"
	    out.append("| " + " | ".join([r["command"], r["input"], human(r["data_bytes"]), ps_txt, t_txt, ratio, w, r["note"]]) + " |")
	text = "\n".join(out) + "\n"
	open(md_path, "w").write(text)
	json.dump({"date": date, "version": version, "box": box, "rows": int(rows_n), "peak_rss": method, "load_start": load0.strip(),
	           "load_end": load1.strip(), "seconds": int(total), "commands": rows}, open(json_path, "w"), indent=1)
	print(text)
	EOF
say "written to $OUT/mem.md and $OUT/mem.json; $(($(date +%s) - started)) s in all"
