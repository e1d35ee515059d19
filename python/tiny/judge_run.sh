#!/bin/sh
# One tiny judge, trained from Monte Carlo labels only (docs/tiny.md, "The judge"):
#   sh python/tiny/judge_run.sh SIGNAL TARGET SEED RL OUT
# SIGNAL: rel-effective | abs-q | rel-ratio (which export of python/tiny/judge_data.sh);
# TARGET: generative (analysis written by the policy, tiny.judge_analyses, then the verdict) or
# verdict (the verdict alone); RL: rl (SFT then GRPO, rewards from `stepwise serve rewards
# --kind judge-agreement` over HTTP) or sft. Writes OUT/sft, OUT/rl (checkpoints, logs) and
# OUT/judge.gguf (the last checkpoint: fixed before training, never chosen by a score), and
# OUT/judge-sft.gguf (the SFT stage's last checkpoint, for the SFT-only row of the ablation).
# Exact truth is read by none of these steps; EVAL=1 then scores the finished judge on the
# ProcessBench split's exact first errors (build/tiny/loop/pb.jsonl from `npm run tiny:loop`).
set -eu
cd "$(dirname "$0")/../.."
SIGNAL=$1 TARGET=$2 SEED=$3 RL=$4 OUT=$5
DATA=${DATA:-build/tiny/judge-data-m16}
SFT_STEPS=${SFT_STEPS:-300}
RL_STEPS=${RL_STEPS:-100}
SRC=build/tiny/llama-src
[ -d "$SRC/gguf-py" ] || git clone -q node_modules/node-llama-cpp/llama/gitRelease.bundle "$SRC"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH="python:$SRC/gguf-py"
PY="nice -n 15 /usr/bin/python3"
mkdir -p "$OUT" build/tiny/base
EXPORT="$DATA/judge-rl-$SIGNAL.jsonl"
[ -f build/tiny/base/policy.pt ] || $PY -m tiny.from_gguf models/tiny/policy.gguf build/tiny/base/policy.pt
ANALYSES=""
if [ "$TARGET" = generative ]; then
  [ -f "$DATA/analyses-$SIGNAL.jsonl" ] || $PY -m tiny.judge_analyses --data "$EXPORT" --policy models/tiny/policy.gguf \
    --out "$DATA/analyses-$SIGNAL.jsonl"
  ANALYSES="--analyses $DATA/analyses-$SIGNAL.jsonl"
fi
if [ ! -f "$OUT/sft/ckpt-$SFT_STEPS.pt" ]; then
  rm -rf "$OUT/sft"
  # shellcheck disable=SC2086
  $PY -m tiny.train_judge --data "$EXPORT" --init build/tiny/base/policy.pt --out "$OUT/sft" --target "$TARGET" \
    $ANALYSES --steps "$SFT_STEPS" --seed "$SEED"
fi
LAST="$OUT/sft/ckpt-$SFT_STEPS.pt"
if [ "$RL" = rl ]; then
  if [ ! -f "$OUT/rl/ckpt-$RL_STEPS.pt" ]; then
    rm -rf "$OUT/rl"
    PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
    node bin/stepwise.js serve rewards --kind judge-agreement --port "$PORT" > "$OUT/reward-server.log" 2>&1 &
    SERVER_PID=$!
    trap 'kill $SERVER_PID' EXIT
    until curl -sf "http://127.0.0.1:$PORT/health" > /dev/null; do
      kill -0 "$SERVER_PID" 2> /dev/null || { cat "$OUT/reward-server.log" >&2; exit 1; }
      sleep 0.5
    done
    STEPWISE_REWARD_URL="http://127.0.0.1:$PORT" $PY -m tiny.grpo_judge --data "$EXPORT" --init "$LAST" \
      --out "$OUT/rl" --steps "$RL_STEPS" --seed "$SEED"
    kill $SERVER_PID
    trap - EXIT
  fi
  LAST="$OUT/rl/ckpt-$RL_STEPS.pt"
fi
$PY -m tiny.export_gguf "$OUT/sft/ckpt-$SFT_STEPS.pt" "$OUT/judge-sft.gguf" --kind judge
$PY -m tiny.export_gguf "$LAST" "$OUT/judge.gguf" --kind judge
if [ "${EVAL:-0}" = 1 ]; then
  for J in judge-sft judge; do
    [ "$J" = judge-sft ] && [ "$RL" != rl ] && continue
    STEPWISE_HOME="$OUT/home" nice -n 15 node bin/stepwise.js eval processbench --judge "generative:gguf:$OUT/$J.gguf" \
      --path build/tiny/loop/pb.jsonl --segmentation tags --out "$OUT/pb-$J.json" --fresh --quiet --json > /dev/null
  done
fi
