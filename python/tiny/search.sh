#!/bin/sh
# Search with the tiny judge on held-out problems (docs/tiny.md): plain sampling, best-of-2,
# best-of-4 and chunk-reset through `stepwise search`, the policy writing `<chunk>` tags, same
# seed, then accuracies with 95% intervals and the paired differences from plain sampling
# (python -m tiny.compare). Problems 1300.. of split heldout: never used to train or choose
# anything.
#   [COUNT=300] [TEMPERATURE=1] [OUT=build/tiny/search] [STRATEGIES="sample chunk-reset best-of-2 best-of-4"]
#   [SEGMENTATION=tags] [JUDGE_VOTES=1] [MAX_ATTEMPTS=5] [JUDGE=models/tiny/judge.gguf] [SEED=0] sh python/tiny/search.sh
# best-of-N for any N (best-of-3 …); MAX_ATTEMPTS=1 makes chunk-reset chunk-by-chunk sampling
# without resets (the same first attempts), which separates the judge's resets from the draw.
set -eu
cd "$(dirname "$0")/../.."
COUNT=${COUNT:-300}
TEMPERATURE=${TEMPERATURE:-1}
OUT=${OUT:-build/tiny/search}
SEGMENTATION=${SEGMENTATION:-tags}
STRATEGIES=${STRATEGIES:-sample chunk-reset best-of-2 best-of-4}
JUDGE_VOTES=${JUDGE_VOTES:-1}
MAX_ATTEMPTS=${MAX_ATTEMPTS:-5}
mkdir -p "$OUT"
export STEPWISE_HOME="$OUT/home"
# SPLIT=train OFFSET=2000: training problems the judge never saw, for choosing search settings
# without touching the test problems.
PYTHONPATH=python /usr/bin/python3 -m tiny.task --split "${SPLIT:-heldout}" --offset "${OFFSET:-1300}" --count "$COUNT" \
  --out "$OUT/problems.jsonl"
run() { # NAME STRATEGY N
  node bin/stepwise.js search --dataset jsonl --path "$OUT/problems.jsonl" --strategy "$2" --n "$3" \
    --policy gguf:models/tiny/policy.gguf --judge "generative:gguf:${JUDGE:-models/tiny/judge.gguf}" \
    --segmentation "$SEGMENTATION" --judge-votes "$JUDGE_VOTES" --max-attempts "$MAX_ATTEMPTS" \
    --temperature "$TEMPERATURE" --seed "${SEED:-0}" --max-tokens 96 --max-step-tokens 48 --no-cache --quiet \
    --out "$OUT/search-$1.jsonl" --json > "$OUT/summary-$1.json"
}
FILES=""
for s in $STRATEGIES; do
  case "$s" in
    best-of-*) run "$s" best-of-n "${s#best-of-}" ;;
    *) run "$s" "$s" 1 ;;
  esac
  FILES="$FILES $OUT/search-$s.jsonl"
done
# shellcheck disable=SC2086
PYTHONPATH=python /usr/bin/python3 -m tiny.compare $FILES | tee "$OUT/compare.json"
