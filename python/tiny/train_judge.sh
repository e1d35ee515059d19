#!/bin/sh
# `npm run tiny:judge`: the committed tiny judge (docs/tiny.md, "The judge"), from Monte Carlo
# labels only. Needs the judge's data: sh python/tiny/judge_data.sh (policy samples on training
# problems 0-1999, `stepwise label --rollouts 16`, `stepwise export --task judge-rl`, balanced).
#  1. SFT from the policy's weights (models/tiny/policy.gguf) on the rel-effective export: the
#     policy's own re-derivation of each chunk (tiny.judge_analyses) as the analysis, the chunk's
#     Monte Carlo label as the verdict; every row kept;
#  2. GRPO on the same export, rewards from `stepwise serve rewards --kind judge-agreement`;
#  3. the last RL checkpoint → models/tiny/judge.gguf and its card entry; then the ProcessBench
#     evaluation on exact first errors (build/tiny/loop/pb.jsonl from `npm run tiny:loop`).
# Signal, target, seed and step counts were fixed before any run (StepWiser's rel-effective).
set -eu
cd "$(dirname "$0")/../.."
OUT=build/tiny/judges/rel-effective-generative-1-rl
EVAL=1 sh python/tiny/judge_run.sh rel-effective generative 1 rl "$OUT"
PYTHONPATH="python:build/tiny/llama-src/gguf-py" nice -n 15 /usr/bin/python3 -m tiny.build_judge "$OUT" models/tiny \
  --data build/tiny/judge-data-m16
