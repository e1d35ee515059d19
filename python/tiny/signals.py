"""How often stepwise's Monte Carlo signals differ, from `stepwise label` output alone (no truth).

    python3 -m tiny.signals --labels labels.jsonl

Per pair of signals: on how many chunks their labels differ and on how many solutions their first
errors differ; per signal: its share of positive chunks. JSON on stdout.
"""

from __future__ import annotations

import argparse
import itertools
import json


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--labels", required=True)
    args = ap.parse_args()
    chunks = solutions = 0
    signals: list[str] = []
    positive: dict[str, int] = {}
    chunk_diff: dict[str, int] = {}
    first_diff: dict[str, int] = {}
    for line in open(args.labels):
        rec = json.loads(line)
        solutions += 1
        for c in rec["chunks"]:
            labels = c["labels"]
            if not signals:
                signals = sorted(labels)
            chunks += 1
            for s in signals:
                positive[s] = positive.get(s, 0) + bool(labels[s])
            for a, b in itertools.combinations(signals, 2):
                key = f"{a} vs {b}"
                chunk_diff[key] = chunk_diff.get(key, 0) + (labels[a] != labels[b])
        for a, b in itertools.combinations(signals, 2):
            key = f"{a} vs {b}"
            first_diff[key] = first_diff.get(key, 0) + (rec["firstError"][a] != rec["firstError"][b])
    print(json.dumps({"world": "tiny", "solutions": solutions, "chunks": chunks,
                      "positiveShare": {s: round(positive[s] / max(1, chunks), 4) for s in signals},
                      "chunksDiffering": chunk_diff, "firstErrorsDiffering": first_diff}, indent=2))


if __name__ == "__main__":
    main()
