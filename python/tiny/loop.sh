#!/bin/sh
# The StepWiser loop on the tiny policy through stepwise's own commands (docs/tiny.md):
# sample problems (default: held-out ProcessBench-split ones; SPLIT=train for the judge's data) in process (gguf:), give each sample its exact
# first error, label the samples with rollouts (M = ROLLOUTS, default 8), measure how often each
# Monte Carlo signal's first error equals the exact one, and export the judge RL set.
#   [SPLIT=processbench|train] [OUT=build/tiny/loop] [ROLLOUTS=8] sh python/tiny/loop.sh [COUNT]
set -eu
cd "$(dirname "$0")/../.."
COUNT=${1:-300}
SPLIT=${SPLIT:-processbench}
OUT=${OUT:-build/tiny/loop}
ROLLOUTS=${ROLLOUTS:-8}
MODEL=models/tiny/policy.gguf
SW="node bin/stepwise.js"
mkdir -p "$OUT"
export STEPWISE_HOME="$OUT/home"
PYTHONPATH=python /usr/bin/python3 -m tiny.task --split "$SPLIT" --count "$COUNT" --out "$OUT/problems.jsonl"
$SW sample --dataset jsonl --path "$OUT/problems.jsonl" --policy "gguf:$MODEL" --n 1 --temperature 1 \
  --seed 0 --max-tokens 96 --out "$OUT/samples.jsonl" --quiet --json > "$OUT/sample-summary.json"
PYTHONPATH=python /usr/bin/python3 -m tiny.truth processbench --samples "$OUT/samples.jsonl" --out "$OUT/pb.jsonl"
# Rollouts in process too: llama-server (this build) answers HTTP 500 "does not match the expected
# Content-only format" for some off-distribution rollouts of bad prefixes, failing the label job.
$SW label --input "$OUT/pb.jsonl" --policy "gguf:$MODEL" \
  --rollouts "$ROLLOUTS" --signals abs-q,rel-ratio,rel-effective,ms-hard,ms-soft,sorm --max-tokens 96 --seed 0 \
  --out "$OUT/labels.jsonl" --quiet --json > "$OUT/label-summary.json"
PYTHONPATH=python /usr/bin/python3 -m tiny.truth agreement --labels "$OUT/labels.jsonl" > "$OUT/agreement.json"
$SW export --from "$OUT/labels.jsonl" --task judge-rl --format trl --signal rel-effective --seed 0 \
  --out "$OUT/judge-rl.jsonl"
cat "$OUT/agreement.json"
