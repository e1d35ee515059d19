#!/bin/sh
# The judge ablations of docs/tiny.md, every judge from Monte Carlo labels only (judge_run.sh:
# SFT, then GRPO through `stepwise serve rewards`), each scored once at the end on the
# ProcessBench split's exact first errors:
#   label signal (rel-effective, abs-q, rel-ratio; generative),
#   generative vs verdict-only (rel-effective), SFT only vs SFT + RL (each run's SFT stage).
# RUNS lists SIGNAL:TARGET:SEED; the default runs seed 1 of every row, then seeds 2 and 3 of the
# committed judge's row, then seeds 2 and 3 of the others (as far as the budget goes). Finished
# runs are skipped, and so are runs another worker holds (OUT.lock). Then tiny.scores writes the table: F1 with 95% bootstrap intervals over the
# 300 samples and paired differences (the rows share the samples).
#   [RUNS="rel-effective:generative:1 …"] sh python/tiny/judge_ablation.sh
set -eu
cd "$(dirname "$0")/../.."
J=build/tiny/judges
RUNS=${RUNS:-"rel-effective:generative:1 rel-effective:verdict:1 abs-q:generative:1 rel-ratio:generative:1
  rel-effective:generative:2 rel-effective:generative:3 rel-effective:verdict:2 abs-q:generative:2
  rel-ratio:generative:2 rel-effective:verdict:3 abs-q:generative:3 rel-ratio:generative:3"}
for RUN in $RUNS; do
  SIGNAL=${RUN%%:*} REST=${RUN#*:}
  TARGET=${REST%%:*} SEED=${REST#*:}
  OUT="$J/$SIGNAL-$TARGET-$SEED-rl"
  [ -f "$OUT/pb-judge.json" ] && continue
  # Two workers may share the list: a run another worker holds is left to it.
  mkdir -p "$J" && mkdir "$OUT.lock" 2> /dev/null || continue
  EVAL=1 sh python/tiny/judge_run.sh "$SIGNAL" "$TARGET" "$SEED" rl "$OUT"
  rmdir "$OUT.lock"
done
[ -n "${NO_SCORES:-}" ] || PYTHONPATH=python /usr/bin/python3 -m tiny.scores "$J" > "$J/ablation.json"
