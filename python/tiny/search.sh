#!/bin/sh
# Search with the tiny judge on held-out problems (docs/tiny.md): plain sampling, best-of-N and
# chunk-reset through `stepwise search`, same seed, then accuracies with 95% intervals and the
# paired differences from plain sampling (python -m tiny.compare).
#   [COUNT=300] [N=4] [TEMPERATURE=1] sh python/tiny/search.sh      (outputs in build/tiny/search)
set -eu
cd "$(dirname "$0")/../.."
COUNT=${COUNT:-300}
N=${N:-4}
TEMPERATURE=${TEMPERATURE:-1}
OUT=build/tiny/search
mkdir -p "$OUT"
export STEPWISE_HOME="$OUT/home"
PYTHONPATH=python /usr/bin/python3 -m tiny.task --split heldout --offset 1300 --count "$COUNT" --out "$OUT/problems.jsonl"
for S in sample chunk-reset best-of-n; do
  node bin/stepwise.js search --dataset jsonl --path "$OUT/problems.jsonl" --strategy "$S" --n "$N" \
    --policy gguf:models/tiny/policy.gguf --judge generative:gguf:models/tiny/judge.gguf \
    --temperature "$TEMPERATURE" --seed 0 --max-tokens 96 --max-step-tokens 32 \
    --out "$OUT/search-$S.jsonl" > "$OUT/summary-$S.json"
done
PYTHONPATH=python /usr/bin/python3 -m tiny.compare "$OUT/search-sample.jsonl" "$OUT/search-chunk-reset.jsonl" \
  "$OUT/search-best-of-n.jsonl" | tee "$OUT/compare.json"
