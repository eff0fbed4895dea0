#!/usr/bin/env bash
# The reference-parity driver (`make parity`; docs/trainstep.md, "Reference
# parity"). For each encoder and seed it trains parastream (--save-initial,
# --trace-ids), runs the PyTorch reference (scripts/parity.py) from the same
# initial parameters in mode (a), the same batches in the same order, and in
# mode (b), its own shuffled order of the rows parastream trained, scores
# the four checkpoints (parastream's final one, the reference's two, step
# 0) with `parastream eval run`, and prints one table, also written to
# $PARITY_OUT/parity.tsv.
#
# `scripts/parity.sh exact` (`make parity-exact`) checks instead that the
# reference computes parastream's steps: for each encoder, parastream trains
# PARITY_EXACT_STEPS steps with a checkpoint after every step; the reference
# replays them from the same initial parameters (after 1 step and after all
# of them, compared with --check-against) and checks every step alone from
# parastream's own state (--check-steps). Table: $PARITY_OUT/exact.tsv.
#
# Settings (environment; the Makefile passes its PARITY_* variables):
#   PARITY_DATASET      quora | ppdb-pairs                      (quora)
#   PARITY_ENCODERS     encoders, space-separated               (avg lstmavg gran)
#   PARITY_EPOCHS       epochs                                  (1)
#   PARITY_SEEDS        seeds, space-separated                  (1)
#   PARITY_DIM          word and LSTM dimension                 (100)
#   PARITY_BATCH        pairs per batch                         (100)
#   PARITY_TRAIN_FLAGS  more `parastream train` flags           ()
#   PARITY_OUT          work and output directory               (out/parity)
#   PARITY_DATA         the shared data                         (../shared/data)
#   PARITY_PYTHON       a python3 with torch and numpy          (/usr/bin/python3)
#   PARITY_BIN          the parastream binary (built by make)   (./parastream)
#   PARITY_EXACT_STEPS  exact: steps checked                    (30)
set -euo pipefail

ACTION=${1:-table}
case "$ACTION" in table | exact) ;; *) echo "usage: scripts/parity.sh [table|exact]" >&2; exit 2 ;; esac

DATASET=${PARITY_DATASET:-quora}
ENCODERS=${PARITY_ENCODERS:-avg lstmavg gran}
EPOCHS=${PARITY_EPOCHS:-1}
SEEDS=${PARITY_SEEDS:-1}
DIM=${PARITY_DIM:-100}
BATCH=${PARITY_BATCH:-100}
TRAIN_FLAGS=${PARITY_TRAIN_FLAGS:-}
OUT=${PARITY_OUT:-out/parity}
DATA=${PARITY_DATA:-../shared/data}
PY=${PARITY_PYTHON:-/usr/bin/python3}
BIN=${PARITY_BIN:-./parastream}
EXACT_STEPS=${PARITY_EXACT_STEPS:-30}
PREFIX=parity

say() { printf '%s parity: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { say "$*"; exit 1; }

if ! "$PY" -c 'import torch, numpy' >/dev/null 2>&1; then
	die "$PY has no torch (or numpy): the reference trainer needs PyTorch. On Debian: apt-get install python3-torch (then it runs with /usr/bin/python3; or set PARITY_PYTHON)"
fi
[ -x "$BIN" ] || die "no parastream binary at $BIN: run 'make build' (make parity does)"
# The extract format; its shards, manifest and topics carry its name.
case "$DATASET" in
quora) input="$DATA/corpora/quora/quora_duplicate_questions.sample.tsv" ;;
ppdb-pairs) input="$DATA/corpora/ppdb/ppdb-1.0-xxxl-lexical-synonym-pairs.tsv" ;;
*) die "PARITY_DATASET=$DATASET: use quora or ppdb-pairs" ;;
esac
[ -e "$input" ] || die "$input is missing: the harness reads the shared data ($DATA; set PARITY_DATA)"
for enc in $ENCODERS; do
	case "$enc" in avg | lstmavg | gran) ;; *) die "PARITY_ENCODERS: $enc: the reference has avg, lstmavg and gran" ;; esac
done

started=$(date +%s)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
NICE="nice -n 10"

# Data: each step is skipped when its output exists.
raw="$OUT/raw-$DATASET" feat="$OUT/feat-$DATASET" evald="$OUT/eval"
if [ ! -e "$raw/manifest.json" ]; then
	say "extracting $DATASET"
	$NICE "$BIN" extract --corpus "$DATASET" --input "$input" --out "$raw" --quiet
fi
if [ ! -e "$evald/sts" ]; then
	say "extracting STS 2012-2015 (test sets)"
	$NICE "$BIN" extract --corpus sts --input "$DATA/eval/sts/201[2-5]/STS.input.*.txt" --out "$evald" --quiet
fi
if [ ! -e "$evald/stsb" ]; then
	say "extracting the STS Benchmark (dev)"
	$NICE "$BIN" extract --corpus stsb --input "$DATA/eval/stsbenchmark/sts-dev.csv" --out "$evald" --quiet
fi
if [ ! -e "$feat/manifest.json" ]; then
	say "featurizing $DATASET (vocabulary from its train split)"
	$NICE "$BIN" featurize --in "$raw" --out "$feat" --corpora "$DATASET" --quiet
fi

# A broker of our own on a free port, stopped on exit.
kafka=$(mktemp -d "$OUT/.kafka.XXXXXX")
broker_pid=""
cleanup() {
	if [ -n "$broker_pid" ]; then
		kill "$broker_pid" 2>/dev/null || true
		wait "$broker_pid" 2>/dev/null || true
	fi
	rm -rf "$kafka"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
$NICE "$BIN" broker --listen 127.0.0.1:0 --data-dir "$kafka/data" >"$kafka/broker.log" 2>&1 &
broker_pid=$!
addr=""
for _ in $(seq 100); do
	addr=$(sed -n 's/^broker listening on \([^ ]*\).*/\1/p' "$kafka/broker.log")
	[ -n "$addr" ] && break
	kill -0 "$broker_pid" 2>/dev/null || die "the broker stopped: $(cat "$kafka/broker.log")"
	sleep 0.1
done
[ -n "$addr" ] || die "the broker gave no address in 10 s"
say "broker on $addr"
$NICE "$BIN" publish --shards "$feat" --brokers "$addr" --topic-prefix "$PREFIX" --quiet >/dev/null
rows="$OUT/rows-$DATASET.jsonl"
$NICE "$BIN" consume --brokers "$addr" --topic-prefix "$PREFIX" --dataset "$DATASET" --n 0 --shuffle-buffer 1 \
	--group parity-dump >"$rows.tmp" 2>"$kafka/consume.log" || die "consume: $(cat "$kafka/consume.log")"
mv "$rows.tmp" "$rows"
say "$(wc -l <"$rows") $DATASET train rows in $rows"

if [ "$ACTION" = exact ]; then
	tsv="$OUT/exact.tsv"
	printf 'dataset\tencoder\tdim\tbatch\tsteps\tstep1_params_max_abs\tstep1_params_max_abs_sqrtv_over_100eps\tstep1_moments_rel\tstepN_params_max_abs\tstepN_params_rel\tstepN_moments_rel\tsteps_agree\tagree_params_rel_sqrtv_over_100eps\tagree_moments_rel\n' >"$tsv"
	seed=${SEEDS%% *}
	field() { sed -n "s/.*[ ]$2=\([^ ]*\).*/\1/p" "$1"; }
	for enc in $ENCODERS; do
		name="$DATASET-$enc-s$seed-d$DIM-b$BATCH"
		run="$OUT/exact/$name"
		rm -rf "$run"
		mkdir -p "$run"
		say "$name: parastream train, $EXACT_STEPS steps, a checkpoint after each"
		# shellcheck disable=SC2086 # TRAIN_FLAGS is a list of flags
		$NICE "$BIN" train --brokers "$addr" --topic-prefix "$PREFIX" --dataset "$DATASET" --model "$enc" \
			--epochs 1 --seed "$seed" --dim "$DIM" --batch "$BATCH" --run "parity-exact-$name" --max-steps "$EXACT_STEPS" \
			--checkpoint-dir "$run/parastream" --checkpoint-every 1 --save-initial --trace-ids "$run/trace.tsv" \
			--quiet $TRAIN_FLAGS 2>&1 | tee "$run/train.log" | sed -u 's/^/    /' >&2
		ck() { printf '%s/parastream/step-%08d' "$run" "$1"; }
		n=$(ls -d "$run"/parastream/step-* | wc -l)
		n=$((n - 1))
		say "$name: reference, 1 step"
		$NICE "$PY" scripts/parity.py --rows "$rows" --init "$(ck 0)" --trace "$run/trace.tsv" --max-steps 1 \
			--out "$run/ref-1" --check-against "$(ck 1)" --quiet >"$run/check-1.log" 2>&1 || die "$(cat "$run/check-1.log")"
		say "$name: reference, $n steps"
		$NICE "$PY" scripts/parity.py --rows "$rows" --init "$(ck 0)" --trace "$run/trace.tsv" --max-steps "$n" \
			--out "$run/ref-n" --check-against "$(ck "$n")" --quiet >"$run/check-n.log" 2>&1 || die "$(cat "$run/check-n.log")"
		say "$name: reference, each of the $n steps from parastream's state"
		$NICE "$PY" scripts/parity.py --rows "$rows" --init "$(ck 0)" --trace "$run/trace.tsv" \
			--check-steps "$run/parastream" >"$run/check-steps.log" 2>&1 || die "$(cat "$run/check-steps.log")"
		sed 's/^/    /' "$run/check-1.log" "$run/check-n.log" "$run/check-steps.log" >&2
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\n' "$DATASET" "$enc" "$DIM" "$BATCH" "$n" \
			"$(field "$run/check-1.log" params_max_abs)" "$(field "$run/check-1.log" params_max_abs_sqrtv_over_100eps)" \
			"$(field "$run/check-1.log" moments_rel)" \
			"$(field "$run/check-n.log" params_max_abs)" "$(field "$run/check-n.log" params_rel)" "$(field "$run/check-n.log" moments_rel)" \
			"$(field "$run/check-steps.log" agree)" "$(field "$run/check-steps.log" steps)" \
			"$(field "$run/check-steps.log" agree_params_rel_sqrtv_over_100eps)" "$(field "$run/check-steps.log" agree_moments_rel)" >>"$tsv"
		# Keep steps 0, 1 and n: the others are 30 MB each.
		for d in "$run"/parastream/step-*; do
			case "$d" in "$(ck 0)" | "$(ck 1)" | "$(ck "$n")") ;; *) rm -rf "$d" ;; esac
		done
	done
	echo
	echo "Reference exactness (max abs: largest |reference - parastream| over all parameters; rel: relative to each tensor's largest value;"
	echo "'sqrt(v)>100eps': over the entries whose Adam denominator is far above eps; moments: Adam's m and v, after step 1 m = 0.1 x gradient)"
	column -t -s "$(printf '\t')" "$tsv"
	echo "written to $tsv; $(($(date +%s) - started)) s in all"
	exit 0
fi

tsv="$OUT/parity.tsv"
printf 'dataset\tencoder\tseed\tepochs\tdim\tbatch\tsteps\tparastream_sts\tref_a_sts\tref_b_sts\tstep0_sts\tparastream_stsb\tref_a_stsb\tref_b_stsb\tstep0_stsb\tparastream_s\tref_a_s\tref_b_s\tref_a_max_rel_diff\n' >"$tsv"

for enc in $ENCODERS; do
	for seed in $SEEDS; do
		name="$DATASET-$enc-s$seed-e$EPOCHS-d$DIM-b$BATCH"
		run="$OUT/runs/$name"
		rm -rf "$run"
		mkdir -p "$run"
		say "$name: parastream train"
		t0=$(date +%s)
		# shellcheck disable=SC2086 # TRAIN_FLAGS is a list of flags
		$NICE "$BIN" train --brokers "$addr" --topic-prefix "$PREFIX" --dataset "$DATASET" --model "$enc" \
			--epochs "$EPOCHS" --seed "$seed" --dim "$DIM" --batch "$BATCH" --run "parity-$name" \
			--checkpoint-dir "$run/parastream" --checkpoint-every 100000000 --save-initial --trace-ids "$run/trace.tsv" \
			--progress-every 60s $TRAIN_FLAGS 2>&1 | tee "$run/train.log" | sed -u 's/^/    /' >&2
		t1=$(date +%s)
		final=$(ls -d "$run"/parastream/step-* | sort | tail -1)
		init="$run/parastream/step-00000000"
		[ "$final" != "$init" ] || die "$name: parastream trained no step"
		say "$name: reference, mode (a): parastream's batches"
		$NICE "$PY" scripts/parity.py --rows "$rows" --init "$init" --trace "$run/trace.tsv" --out "$run/ref-a" \
			--check-against "$final" 2>&1 | tee "$run/ref-a.log" | sed -u 's/^/    /' >&2
		t2=$(date +%s)
		say "$name: reference, mode (b): own order"
		$NICE "$PY" scripts/parity.py --rows "$rows" --rows-of "$run/trace.tsv" --init "$init" --epochs "$EPOCHS" --seed "$seed" \
			--out "$run/ref-b" 2>&1 | tee "$run/ref-b.log" | sed -u 's/^/    /' >&2
		t3=$(date +%s)
		# Each run's own results: a run trained again replaces them whole.
		results="$run/results"
		for ck in "$final" "$run/ref-a" "$run/ref-b" "$init"; do
			say "$name: eval $(basename "$ck")"
			$NICE "$BIN" eval run --checkpoint "$ck" --eval "$evald" --out "$results" >/dev/null
		done
		maxrel=$(sed -n 's/.*largest relative difference of the parameters \([^ ]*\).*/\1/p' "$run/ref-a.log")
		steps=$(sed -n 's/^parity.py: \([0-9]*\) steps.*/\1/p' "$run/ref-a.log")
		"$PY" - "$results/results.csv" "$final" "$run/ref-a" "$run/ref-b" "$init" <<-'EOF' >"$run/scores.tsv"
			import csv, sys
			path, cks = sys.argv[1], sys.argv[2:]
			sts = {c: {} for c in cks}
			stsb = {}
			for r in csv.DictReader(open(path)):
			    c = r["checkpoint"]
			    if c not in sts:
			        continue
			    if r["corpus"] == "sts" and r["kind"] == "mean" and r["year"] in ("2012", "2013", "2014", "2015"):
			        sts[c][r["year"]] = float(r["pearson"])
			    if r["corpus"] == "stsb" and r["kind"] == "dataset" and r["dataset"] == "stsb/dev":
			        stsb[c] = float(r["pearson"])
			out = []
			for c in cks:
			    ys = sts[c]
			    out.append(f"{sum(ys.values()) / len(ys):.2f}" if len(ys) == 4 else "NA")
			out += [f"{stsb[c]:.2f}" if c in stsb else "NA" for c in cks]
			print("\t".join(out))
		EOF
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$DATASET" "$enc" "$seed" "$EPOCHS" "$DIM" "$BATCH" "$steps" \
			"$(cat "$run/scores.tsv")" "$((t1 - t0))" "$((t2 - t1))" "$((t3 - t2))" "${maxrel:-NA}" >>"$tsv"
	done
done

echo
echo "Reference parity: mean Pearson r x100 over STS 2012-2015 (the mean of the four yearly means), and STS Benchmark dev"
echo "(a): the reference on parastream's batches; (b): its own shuffle; all from parastream's step-0 parameters"
"$PY" - "$tsv" <<-'EOF'
	import csv, sys
	rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
	head = ["dataset", "encoder", "seed", "epochs", "steps", "parastream", "ref (a)", "ref (b)", "step-0",
	        "| stsb: ps", "(a)", "(b)", "step-0", "| time s: ps", "(a)", "(b)", "| (a) vs ps max rel diff"]
	keys = ["dataset", "encoder", "seed", "epochs", "steps", "parastream_sts", "ref_a_sts", "ref_b_sts", "step0_sts",
	        "parastream_stsb", "ref_a_stsb", "ref_b_stsb", "step0_stsb", "parastream_s", "ref_a_s", "ref_b_s", "ref_a_max_rel_diff"]
	table = [head] + [[r[k] for k in keys] for r in rows]
	w = [max(len(t[i]) for t in table) for i in range(len(head))]
	for t in table:
	    print("  ".join(s.rjust(w[i]) for i, s in enumerate(t)))
EOF
echo "written to $tsv; each run's results in $OUT/runs/<run>/results/results.csv; $(($(date +%s) - started)) s in all"
