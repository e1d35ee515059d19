"""Compare `stepwise search` outputs on the same problems: accuracy of each with a 95% Wilson
interval, tokens per problem, and each strategy's difference from the first (paired by problem
id) with a 95% interval (normal approximation of the mean per-problem difference).

    python3 -m tiny.compare search-sample.jsonl search-chunk-reset.jsonl search-best-of-n.jsonl
"""

from __future__ import annotations

import json
import sys

from .stats import interval
from .truth import wilson


def load(path: str) -> dict[str, dict]:
    rows = {}
    for line in open(path):
        r = json.loads(line)
        rows[r["id"]] = r
    return rows


def tokens(r: dict) -> int:
    c = r["cost"]
    return sum(c[k]["promptTokens"] + c[k]["completionTokens"] for k in ("policy", "judge"))


def main() -> None:
    files = sys.argv[1:]
    runs = [load(f) for f in files]
    ids = sorted(set.intersection(*(set(r) for r in runs)))
    base = runs[0]
    out = {"world": "tiny", "problems": len(ids), "strategies": []}
    for f, run in zip(files, runs):
        k = sum(bool(run[i]["correct"]) for i in ids)
        n = len(ids)
        entry = {
            "file": f,
            "strategy": run[ids[0]]["strategy"],
            "accuracy": round(k / n, 4),
            "ci95": wilson(k, n),
            "tokensPerProblem": round(sum(tokens(run[i]) for i in ids) / n, 1),
            "policyCallsPerProblem": round(sum(run[i]["cost"]["policy"]["calls"] for i in ids) / n, 2),
            "judgeCallsPerProblem": round(sum(run[i]["cost"]["judge"]["calls"] for i in ids) / n, 2),
        }
        if run is not base:
            d = [int(bool(run[i]["correct"])) - int(bool(base[i]["correct"])) for i in ids]
            mean, ci = interval(d)
            entry["differenceFromFirst"] = {"mean": round(mean, 4), "ci95": ci,
                                            "better": sum(x > 0 for x in d), "worse": sum(x < 0 for x in d)}
        out["strategies"].append(entry)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
