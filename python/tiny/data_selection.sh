#!/bin/sh
# The data selection ablation (docs/tiny.md, "Data selection"): the policy fine-tuned on
# judge-selected vs outcome-only correct solutions (StepWiser: 60.1 -> 63.0 vs 60.9, 7B).
#   1. N samples per training problem from the committed policy (`stepwise sample`, tags), on a
#      fresh training range (split train, problems 4000..: the judge's data is 0-1999, search
#      settings were tried on 2000-2299).
#   2. `stepwise select` with the committed judge: per problem, the correct response (final answer
#      checked against the problem's answer) with the highest mean chunk score, and the
#      outcome-only pick (a correct response drawn at random, seeded). One response per problem
#      each, on the same problems: the two sets have the same size.
#   3. Rejection-sampling fine-tune of the committed policy (read back by tiny.from_gguf) on each
#      set: same steps, learning rate, batch and seeds (tiny.select_sft, through tiny.trainer).
#      Settings fixed before any run; the last checkpoint is kept.
#   4. `stepwise sample` of the base policy and of every fine-tune on held-out problems 1300-1599
#      (never used to train or choose anything), same seed, then tiny.selection_compare.
# No step reads exact truth: the problem rows carry the question and its final answer only.
#   [OUT=build/tiny/data-selection] [COUNT=2000] [OFFSET=4000] [N=8] [SEEDS="1 2 3 4 5"] [STEPS=150]
#   [LR=1e-3] [EVAL_N=4] sh python/tiny/data_selection.sh
set -eu
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/tiny/data-selection}
COUNT=${COUNT:-2000}
OFFSET=${OFFSET:-4000}
N=${N:-8}
SEEDS=${SEEDS:-1 2 3 4 5}
STEPS=${STEPS:-150}
LR=${LR:-1e-3}
EVAL_N=${EVAL_N:-4}
SW="nice -n 10 node bin/stepwise.js"
SRC=build/tiny/llama-src
[ -d "$SRC/gguf-py" ] || git clone -q node_modules/node-llama-cpp/llama/gitRelease.bundle "$SRC"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH="python:$SRC/gguf-py"
PY="nice -n 10 /usr/bin/python3"
mkdir -p "$OUT"
export STEPWISE_HOME="$OUT/home"

# 1-2. Samples and the two picks (both commands resume by content).
$PY -m tiny.task --split train --offset "$OFFSET" --count "$COUNT" --out "$OUT/problems.jsonl"
$SW sample --dataset jsonl --path "$OUT/problems.jsonl" --policy gguf:models/tiny/policy.gguf --n "$N" --temperature 1 \
  --seed 0 --max-tokens 96 --segmentation tags --out "$OUT/samples.jsonl" --quiet --json > "$OUT/sample-summary.json"
$SW select --input "$OUT/samples.jsonl" --judge generative:gguf:models/tiny/judge.gguf --seed 0 \
  --out "$OUT/selected.jsonl" --quiet --json > "$OUT/select-summary.json"

# 3. The fine-tunes, from the committed weights.
[ -f "$OUT/base/policy.pt" ] || { mkdir -p "$OUT/base"; $PY -m tiny.from_gguf models/tiny/policy.gguf "$OUT/base/policy.pt"; }
for SEED in $SEEDS; do
  for PICK in chosen outcomeOnly; do
    RUN="$OUT/ft-$PICK-s$SEED"
    if [ ! -f "$RUN/policy.gguf" ]; then
      rm -rf "$RUN"
      $PY -m tiny.select_sft --selected "$OUT/selected.jsonl" --pick "$PICK" --init "$OUT/base/policy.pt" --out "$RUN" \
        --steps "$STEPS" --lr "$LR" --seed "$SEED"
      $PY -m tiny.export_gguf "$RUN/ckpt-$STEPS.pt" "$RUN/policy.gguf" --kind policy
    fi
  done
done

# 4. Held-out evaluation (scoring only): base policy and every fine-tune, same problems and seed.
$PY -m tiny.task --split heldout --offset 1300 --count 300 --out "$OUT/heldout.jsonl"
evaluate() { # NAME GGUF
  $SW sample --dataset jsonl --path "$OUT/heldout.jsonl" --policy "gguf:$2" --n "$EVAL_N" --temperature 1 --seed 0 \
    --max-tokens 96 --segmentation tags --out "$OUT/eval-$1.jsonl" --quiet --json > "$OUT/eval-$1-summary.json"
}
evaluate base models/tiny/policy.gguf
FILES="$OUT/eval-base.jsonl"
for SEED in $SEEDS; do
  for PICK in outcomeOnly chosen; do
    evaluate "$PICK-s$SEED" "$OUT/ft-$PICK-s$SEED/policy.gguf"
    FILES="$FILES $OUT/eval-$PICK-s$SEED.jsonl"
  done
done
# shellcheck disable=SC2086
$PY -m tiny.selection_compare $FILES | tee "$OUT/compare.json"
