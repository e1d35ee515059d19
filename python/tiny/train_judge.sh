#!/bin/sh
# `npm run tiny:judge`: the tiny generative judge (docs/tiny.md). Needs the policy run
# (npm run tiny:train, which trains on to step 2500 after the policy's checkpoint is chosen) and
# the judge's data (SPLIT=train OUT=build/tiny/judge-data ROLLOUTS=4 sh python/tiny/loop.sh 2000:
# policy samples on training problems under --segmentation tags, labeled by stepwise label,
# exported by stepwise export --task judge-rl).
#  1. judge base: a later checkpoint of the policy's own run (the policy trained further: better
#     arithmetic; a judge that redoes a step with the policy's own weights repeats its slips);
#  2. SFT on the judge RL export (analysis + verdict), best validation checkpoint → judge.gguf.
set -eu
cd "$(dirname "$0")/../.."
SRC=build/tiny/llama-src
[ -d "$SRC/gguf-py" ] || git clone -q node_modules/node-llama-cpp/llama/gitRelease.bundle "$SRC"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
BASE_CKPT=${BASE_CKPT:-build/tiny/policy/ckpt-1500.pt}
DATA=${DATA:-build/tiny/judge-data/judge-rl.jsonl}
PYTHONPATH=python nice -n 15 /usr/bin/python3 -m tiny.train_judge --data "$DATA" --init "$BASE_CKPT" \
  --out build/tiny/judge --steps 600 --eval-every 100 --lr 2e-3 ${JUDGE_FLAGS:-}
PYTHONPATH="python:$SRC/gguf-py" nice -n 15 /usr/bin/python3 -m tiny.build_judge build/tiny/judge models/tiny \
  --base "$BASE_CKPT"
