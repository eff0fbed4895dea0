#!/usr/bin/env bash
# make eval-research (issue 23): the research's evaluations end to end on
# the shared data, the figures docs/evalsink.md and docs/trainstep.md give
# beside the papers'.
#
#   1. every evaluation set into $OUT/eval (make eval-data);
#   2. the Quora sample and SNLI's train pairs featurized together, published
#      to a broker of its own;
#   3. two runs of the same model: Quora alone, and Quora with SNLI
#      (multitask: the NLI head on SNLI's batches);
#   4. each checkpoint's STS adaptation (parastream adapt);
#   5. one `eval run` of each checkpoint, out of the box and adapted: every
#      task (STS, SICK relatedness and entailment, SST-2, MR, MRPC, SNLI,
#      SemEval CQA, TrecQA, WikiQA, SCWS), each figure with its interval;
#   6. `eval compare` of the multitask checkpoint against the single-task
#      one, task by task.
#
# Settings (environment): BIN (./parastream), DATA (../shared/data), OUT
# (out/research; refused when it exists, so that nothing is overwritten),
# MODEL (avg), DIM (100), EPOCHS (10), SEED (1), MIX ("": the datasets'
# sizes, one pass over each per epoch). Each step's wall time is printed.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-./parastream}
DATA=${DATA:-../shared/data}
OUT=${OUT:-out/research}
MODEL=${MODEL:-avg}
DIM=${DIM:-100}
EPOCHS=${EPOCHS:-10}
SEED=${SEED:-1}
MIX=${MIX:-}

if [ -e "$OUT" ]; then
	echo "eval-research: $OUT exists: remove it, or set OUT to a new directory" >&2
	exit 2
fi
for f in "$DATA/corpora/quora/quora_duplicate_questions.sample.tsv" "$DATA/eval/snli/snli_1.0_train.first1024.jsonl.gz"; do
	[ -e "$f" ] || { echo "eval-research: $f is missing: set DATA to the shared data folder" >&2; exit 1; }
done
mkdir -p "$OUT"
exec 3>&1 # the timings go to the terminal whatever a step's output is redirected to
step() {
	echo
	echo "== $* ($(date -u +%T))"
}
timed() {
	local t0=$SECONDS
	"$@"
	echo "   ($((SECONDS - t0)) s)" >&3
}

step "evaluation sets -> $OUT/eval"
timed make --no-print-directory eval-data BIN="$BIN" DATA="$DATA" EVAL_OUT="$OUT/eval" >"$OUT/eval-data.log"

step "training data: the Quora sample and SNLI's train pairs, featurized together"
timed "$BIN" extract --corpus quora --input "$DATA/corpora/quora/quora_duplicate_questions.sample.tsv" --out "$OUT/data" >"$OUT/extract.log"
timed "$BIN" extract --corpus snli --input "$DATA/eval/snli/snli_1.0_train.first1024.jsonl.gz" --out "$OUT/data" >>"$OUT/extract.log"
timed "$BIN" featurize --in "$OUT/data" --out "$OUT/data-f" >"$OUT/featurize.log"

step "broker and publish"
"$BIN" broker --listen 127.0.0.1:0 --data-dir "$OUT/kafka" >"$OUT/broker.log" 2>&1 &
broker=$!
trap 'kill $broker 2>/dev/null || true' EXIT
for _ in $(seq 100); do
	grep -q "^broker listening on " "$OUT/broker.log" 2>/dev/null && break
	sleep 0.1
done
addr=$(sed -n 's/^broker listening on \([^ ]*\).*/\1/p' "$OUT/broker.log")
[ -n "$addr" ] || { echo "eval-research: the broker did not start:" >&2; cat "$OUT/broker.log" >&2; exit 1; }
timed "$BIN" publish --shards "$OUT/data-f" --brokers "$addr" --quiet

train() { # run datasets [flags]
	local run=$1 datasets=$2
	shift 2
	timed "$BIN" train --brokers "$addr" --dataset "$datasets" --min-label 1 --model "$MODEL" --dim "$DIM" --epochs "$EPOCHS" --seed "$SEED" \
		--run "$run" --checkpoint-dir "$OUT/ck-$run" --checkpoint-every 1000000 --quiet "$@"
}
step "train $MODEL on Quora alone"
train single quora
step "train $MODEL on Quora with SNLI (multitask)"
if [ -n "$MIX" ]; then
	train multi quora,snli --mix "$MIX" --trace-ids "$OUT/multi.trace"
else
	train multi quora,snli --trace-ids "$OUT/multi.trace"
fi
awk -F'\t' '{print $1 "\t" $4}' "$OUT/multi.trace" | sort -u | cut -f2 | sort | uniq -c | awk '{printf "   %s steps of %s\n", $1, $2}'

single=$(ls -d "$OUT"/ck-single/step-* | tail -1)
multi=$(ls -d "$OUT"/ck-multi/step-* | tail -1)
for ck in "$single" "$multi"; do
	step "adapt $ck"
	timed "$BIN" adapt --checkpoint "$ck" --eval "$OUT/eval" >"$OUT/adapt-$(basename "$(dirname "$ck")").log"
done
for ck in "$single" "$multi"; do
	for adapt in "" --adapt; do
		step "eval run $ck $adapt"
		timed "$BIN" eval run --checkpoint "$ck" --eval "$OUT/eval" --out "$OUT/results" --seed "$SEED" $adapt -v >"$OUT/eval-$(basename "$(dirname "$ck")")$adapt.log" 2>&1
	done
done

step "eval compare: multitask (B) against Quora alone (A)"
timed "$BIN" eval compare --eval "$OUT/eval" --out "$OUT/results" --seed "$SEED" "$single" "$multi" | tee "$OUT/compare.txt" | tail -5

echo
echo "report: $OUT/results/report.md; comparison: $OUT/compare.txt; results table: $OUT/results/results.csv"
