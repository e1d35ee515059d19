#!/bin/sh
# Search with the tiny judge on held-out problems (docs/tiny.md): plain sampling, best-of-2,
# best-of-4 and chunk-reset through `stepwise search`, same seed, then accuracies with 95% intervals and the
# paired differences from plain sampling (python -m tiny.compare).
#   [COUNT=300] [TEMPERATURE=1] sh python/tiny/search.sh      (outputs in build/tiny/search)
set -eu
cd "$(dirname "$0")/../.."
COUNT=${COUNT:-300}
TEMPERATURE=${TEMPERATURE:-1}
OUT=build/tiny/search
mkdir -p "$OUT"
export STEPWISE_HOME="$OUT/home"
PYTHONPATH=python /usr/bin/python3 -m tiny.task --split heldout --offset 1300 --count "$COUNT" --out "$OUT/problems.jsonl"
run() { # NAME STRATEGY N
  node bin/stepwise.js search --dataset jsonl --path "$OUT/problems.jsonl" --strategy "$2" --n "$3" \
    --policy gguf:models/tiny/policy.gguf --judge generative:gguf:models/tiny/judge.gguf \
    --temperature "$TEMPERATURE" --seed 0 --max-tokens 96 --max-step-tokens 32 --no-cache --quiet \
    --out "$OUT/search-$1.jsonl" --json > "$OUT/summary-$1.json"
}
run sample sample 1
run chunk-reset chunk-reset 1
run best-of-2 best-of-n 2
run best-of-4 best-of-n 4
PYTHONPATH=python /usr/bin/python3 -m tiny.compare "$OUT/search-sample.jsonl" "$OUT/search-chunk-reset.jsonl" \
  "$OUT/search-best-of-2.jsonl" "$OUT/search-best-of-4.jsonl" | tee "$OUT/compare.json"
