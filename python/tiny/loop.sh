#!/bin/sh
# The StepWiser loop on the tiny policy through stepwise's own commands (docs/tiny.md):
# sample problems (default: held-out ProcessBench-split ones; SPLIT=train for the judge's data) in process (gguf:), give each sample its exact
# first error, label the samples with rollouts served by llama-server, measure how often each
# Monte Carlo signal's first error equals the exact one, and export the judge RL set.
#   [SPLIT=processbench|train] [OUT=build/tiny/loop] sh python/tiny/loop.sh [COUNT]
set -eu
cd "$(dirname "$0")/../.."
COUNT=${1:-300}
SPLIT=${SPLIT:-processbench}
OUT=${OUT:-build/tiny/loop}
MODEL=models/tiny/policy.gguf
SW="node bin/stepwise.js"
mkdir -p "$OUT"
export STEPWISE_HOME="$OUT/home"
PYTHONPATH=python /usr/bin/python3 -m tiny.task --split "$SPLIT" --count "$COUNT" --out "$OUT/problems.jsonl"
$SW sample --dataset jsonl --path "$OUT/problems.jsonl" --policy "gguf:$MODEL" --n 1 --temperature 1 \
  --seed 0 --max-tokens 96 --out "$OUT/samples.jsonl" --quiet > "$OUT/sample-summary.json"
PYTHONPATH=python /usr/bin/python3 -m tiny.truth processbench --samples "$OUT/samples.jsonl" --out "$OUT/pb.jsonl"
PORT=${PORT:-18714}
../shared/bin/llama-server -m "$MODEL" --host 127.0.0.1 --port "$PORT" -t 1 -c 2048 -np 8 > "$OUT/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER' EXIT
until curl -sf "http://127.0.0.1:$PORT/health" > /dev/null; do sleep 0.5; done
$SW label --input "$OUT/pb.jsonl" --policy openai:tiny-policy --base-url "http://127.0.0.1:$PORT/v1" \
  --rollouts 8 --signals abs-q,rel-ratio,rel-effective,ms-hard,ms-soft,sorm --max-tokens 96 --seed 0 \
  --concurrency 2 --out "$OUT/labels.jsonl" --quiet > "$OUT/label-summary.json"
PYTHONPATH=python /usr/bin/python3 -m tiny.truth agreement --labels "$OUT/labels.jsonl" > "$OUT/agreement.json"
$SW export --from "$OUT/labels.jsonl" --task judge-rl --format trl --signal rel-effective --seed 0 \
  --out "$OUT/judge-rl.jsonl"
cat "$OUT/agreement.json"
