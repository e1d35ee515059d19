#!/bin/sh
# `npm run tiny:judge`: the tiny generative judge (docs/tiny.md). Needs the policy run
# (npm run tiny:train: its step-1250 checkpoint, the policy trained further, is the judge base)
# and the judge's data: SPLIT=train OUT=build/tiny/judge-data ROLLOUTS=4 sh python/tiny/loop.sh 2000
# (policy samples on training problems under --segmentation tags, labeled by stepwise label,
# exported by stepwise export --task judge-rl, balanced 50/50), plus the same labels exported
# with --no-balance (every labeled chunk).
#  1. SFT from the judge base on the balanced export: analysis + verdict, rows whose analysis
#     disagrees with their Monte Carlo label dropped (--consistent-only), 300 steps;
#  2. SFT continued on every labeled chunk (--consistent-only, classes balanced by repetition),
#     400 steps; the checkpoint with the best validation agreement → models/tiny/judge.gguf.
set -eu
cd "$(dirname "$0")/../.."
SRC=build/tiny/llama-src
[ -d "$SRC/gguf-py" ] || git clone -q node_modules/node-llama-cpp/llama/gitRelease.bundle "$SRC"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
BASE_CKPT=${BASE_CKPT:-build/tiny/policy/ckpt-1250.pt}
DATA=${DATA:-build/tiny/judge-data}
STEPWISE_HOME="$DATA/home" node bin/stepwise.js export --from "$DATA/labels.jsonl" --task judge-rl --format trl \
  --signal rel-effective --seed 0 --no-balance --out "$DATA/judge-rl-all.jsonl"
PYTHONPATH=python nice -n 15 /usr/bin/python3 -m tiny.train_judge --data "$DATA/judge-rl.jsonl" --init "$BASE_CKPT" \
  --out build/tiny/judge-1 --steps 300 --eval-every 100 --lr 2e-3 --consistent-only
PYTHONPATH=python nice -n 15 /usr/bin/python3 -m tiny.train_judge --data "$DATA/judge-rl-all.jsonl" \
  --init build/tiny/judge-1/ckpt-300.pt --out build/tiny/judge --steps 400 --eval-every 100 --lr 2e-3 \
  --consistent-only --balance
PYTHONPATH="python:$SRC/gguf-py" nice -n 15 /usr/bin/python3 -m tiny.build_judge build/tiny/judge models/tiny \
  --base "$BASE_CKPT"
