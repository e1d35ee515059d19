#!/bin/sh
# The honest judge's data (docs/tiny.md, "The judge"): what a real user has, and nothing else.
# Policy samples on training problems (split train), Monte Carlo labels by `stepwise label` with
# M = 16 rollouts (StepWiser's), and `stepwise export --task judge-rl` per signal, balanced 50/50
# by the export. No exact truth is read here: the problems file carries the question and its
# final answer (what `stepwise label` needs to score a rollout), never a step's truth.
#   [OUT=build/tiny/judge-data-m16] [OFFSET=0] [ROLLOUTS=16] sh python/tiny/judge_data.sh [COUNT]
set -eu
cd "$(dirname "$0")/../.."
COUNT=${1:-2000}
OFFSET=${OFFSET:-0}
OUT=${OUT:-build/tiny/judge-data-m16}
ROLLOUTS=${ROLLOUTS:-16}
SW="node bin/stepwise.js"
mkdir -p "$OUT"
export STEPWISE_HOME="$OUT/home"
PYTHONPATH=python /usr/bin/python3 -m tiny.task --split train --offset "$OFFSET" --count "$COUNT" --out "$OUT/problems.jsonl"
$SW sample --dataset jsonl --path "$OUT/problems.jsonl" --policy gguf:models/tiny/policy.gguf --n 1 --temperature 1 \
  --seed 0 --max-tokens 96 --segmentation tags --out "$OUT/samples.jsonl" --quiet --json > "$OUT/sample-summary.json"
$SW label --input "$OUT/samples.jsonl" --dataset jsonl --path "$OUT/problems.jsonl" --policy gguf:models/tiny/policy.gguf \
  --rollouts "$ROLLOUTS" --signals abs-q,rel-ratio,rel-effective --max-tokens 96 --seed 0 \
  --out "$OUT/labels.jsonl" --quiet --json > "$OUT/label-summary.json"
for SIGNAL in rel-effective abs-q rel-ratio; do
  $SW export --input "$OUT/labels.jsonl" --task judge-rl --format trl --signal "$SIGNAL" --seed 0 \
    --out "$OUT/judge-rl-$SIGNAL.jsonl" --json > "$OUT/export-$SIGNAL.json"
done
# How often the three signals differ (Monte Carlo labels only; no truth).
PYTHONPATH=python /usr/bin/python3 -m tiny.signals --labels "$OUT/labels.jsonl" > "$OUT/signals.json"
cat "$OUT/signals.json"
