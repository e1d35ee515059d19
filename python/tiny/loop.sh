#!/bin/sh
# The StepWiser loop on the tiny policy through stepwise's own commands (docs/tiny.md):
# sample problems (default: held-out ProcessBench-split ones; SPLIT=train for the judge's data),
# give each sample its exact first error, label the samples with rollouts (M = ROLLOUTS,
# default 8), measure how often each Monte Carlo signal's first error equals the exact one, and
# export the judge RL set. The policy writes `<chunk>` tags (SEGMENTATION=tags, the default) or
# blank-line paragraphs (SEGMENTATION=paragraph).
#   [SPLIT=processbench|train] [OFFSET=0] [OUT=build/tiny/loop] [ROLLOUTS=8] [SEGMENTATION=tags]
#   [SERVER=llama-server] sh python/tiny/loop.sh [COUNT]
# SERVER=llama-server samples and labels through ../shared/bin/llama-server (started here on a
# free loopback port, stopped by its PID at the end); otherwise in process (gguf:).
set -eu
cd "$(dirname "$0")/../.."
COUNT=${1:-300}
SPLIT=${SPLIT:-processbench}
OFFSET=${OFFSET:-0}
OUT=${OUT:-build/tiny/loop}
ROLLOUTS=${ROLLOUTS:-8}
SEGMENTATION=${SEGMENTATION:-tags}
MODEL=models/tiny/policy.gguf
SW="node bin/stepwise.js"
mkdir -p "$OUT"
export STEPWISE_HOME="$OUT/home"
POLICY="gguf:$MODEL"
BASE=""
if [ "${SERVER:-}" = llama-server ]; then
  PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
  ../shared/bin/llama-server -m "$MODEL" --host 127.0.0.1 --port "$PORT" -t 1 -c 4096 -np 4 > "$OUT/llama-server.log" 2>&1 &
  SERVER_PID=$!
  trap 'kill $SERVER_PID' EXIT
  until curl -sf "http://127.0.0.1:$PORT/health" > /dev/null; do sleep 0.5; done
  POLICY="openai:tiny-policy"
  BASE="--base-url http://127.0.0.1:$PORT/v1"
fi
PYTHONPATH=python /usr/bin/python3 -m tiny.task --split "$SPLIT" --offset "$OFFSET" --count "$COUNT" --out "$OUT/problems.jsonl"
# shellcheck disable=SC2086
$SW sample --dataset jsonl --path "$OUT/problems.jsonl" --policy "$POLICY" $BASE --n 1 --temperature 1 \
  --seed 0 --max-tokens 96 --segmentation "$SEGMENTATION" --out "$OUT/samples.jsonl" --quiet --json > "$OUT/sample-summary.json"
PYTHONPATH=python /usr/bin/python3 -m tiny.truth processbench --samples "$OUT/samples.jsonl" --out "$OUT/pb.jsonl"
# shellcheck disable=SC2086
$SW label --input "$OUT/samples.jsonl" --dataset jsonl --path "$OUT/problems.jsonl" --policy "$POLICY" $BASE \
  --rollouts "$ROLLOUTS" --signals abs-q,rel-ratio,rel-effective,ms-hard,ms-soft,sorm --max-tokens 96 --seed 0 \
  --out "$OUT/labels.jsonl" --quiet --json > "$OUT/label-summary.json"
PYTHONPATH=python /usr/bin/python3 -m tiny.truth agreement --labels "$OUT/labels.jsonl" > "$OUT/agreement.json"
$SW export --from "$OUT/labels.jsonl" --task judge-rl --format trl --signal rel-effective --seed 0 \
  --out "$OUT/judge-rl.jsonl"
cat "$OUT/agreement.json"
