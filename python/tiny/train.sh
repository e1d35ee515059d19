#!/bin/sh
# `npm run tiny:train`: train the tiny policy, pick its checkpoint, export models/tiny/policy.gguf
# and its card entry (docs/tiny.md). The run goes on to step 1250: that checkpoint, the policy
# trained further, is the judge's base (npm run tiny:judge). Needs Debian's python3-torch, libopenblas0-pthread and
# python3-numpy (/usr/bin/python3). Seeded: the same settings on the same machine give the same run.
# The run goes to build/tiny/policy (resumable logs, checkpoints); settings below are the ones
# the committed model was trained with.
set -eu
cd "$(dirname "$0")/../.."
SRC=build/tiny/llama-src
if [ ! -d "$SRC/gguf-py" ]; then
  mkdir -p build/tiny
  # gguf-py (pure Python + numpy) from the llama.cpp source node-llama-cpp ships; not vendored.
  git clone -q node_modules/node-llama-cpp/llama/gitRelease.bundle "$SRC"
fi
RUN=${TINY_RUN:-build/tiny/policy}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
PYTHONPATH=python nice -n 15 /usr/bin/python3 -m tiny.train_policy --out "$RUN" \
  --steps 2500 --eval-every 250 --eval-count 100 \
  --dim 64 --layers 3 --heads 4 --ffn 192 --lr 4e-3 --batch 32 --seed 1 --threads 1 \
  --stop-at 1250
PYTHONPATH="python:$SRC/gguf-py" nice -n 15 /usr/bin/python3 -m tiny.build_policy "$RUN" models/tiny
