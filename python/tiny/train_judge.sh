#!/bin/sh
# `npm run tiny:judge`: the tiny generative judge (docs/tiny.md). Needs the policy
# (npm run tiny:train) and the judge's data (SPLIT=train OUT=build/tiny/judge-data ROLLOUTS=4
# sh python/tiny/loop.sh 1000: policy samples on training problems, labeled by stepwise label,
# exported by stepwise export --task judge-rl).
#  1. judge base: the policy's checkpoint trained further on the same task (better arithmetic:
#     a judge that redoes a step's arithmetic with the policy's own weights repeats its slips);
#  2. SFT on the judge RL export (analysis + verdict), best validation checkpoint → judge.gguf.
set -eu
cd "$(dirname "$0")/../.."
SRC=build/tiny/llama-src
[ -d "$SRC/gguf-py" ] || git clone -q node_modules/node-llama-cpp/llama/gitRelease.bundle "$SRC"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
POLICY_CKPT=${POLICY_CKPT:-build/tiny/policy/ckpt-750.pt}
PYTHONPATH=python nice -n 15 /usr/bin/python3 -m tiny.train_policy --init "$POLICY_CKPT" --out build/tiny/judge-base \
  --steps 1250 --stop-at 250 --eval-every 250 --eval-count 100 --dim 64 --layers 3 --heads 4 --ffn 192 \
  --lr 2e-3 --threads 1 --seed 1
PYTHONPATH=python nice -n 15 /usr/bin/python3 -m tiny.train_judge --data build/tiny/judge-data/judge-rl.jsonl \
  --init build/tiny/judge-base/ckpt-250.pt --out build/tiny/judge --steps 400 --eval-every 100 --lr 2e-3
PYTHONPATH="python:$SRC/gguf-py" nice -n 15 /usr/bin/python3 -m tiny.build_judge build/tiny/judge models/tiny --base build/tiny/judge-base
