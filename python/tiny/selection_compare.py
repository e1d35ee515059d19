"""Score the data selection ablation (docs/tiny.md): `stepwise sample` outputs of the base policy
and of each fine-tune on the same held-out problems, same seed. Correctness is the final answer
as `stepwise sample` checked it against the problem's answer.

A row is one recipe, possibly over several fine-tune seeds (files named eval-<recipe>-s<seed>.jsonl
or eval-<recipe>.jsonl). Its accuracy is over all its samples; the 95% interval is a normal
interval over problems (each problem's accuracy averaged over its samples and seeds, so samples of
one problem are not counted as independent). Paired differences between rows take, per problem,
the difference of those averages, with a normal 95% interval over problems (and, between two
recipes fine-tuned with the same seeds, the difference seed by seed). Files are compared in the
order given: each difference is the later row minus the earlier one.

    python3 -m tiny.selection_compare DIR/eval-base.jsonl DIR/eval-chosen-s1.jsonl ... > compare.json
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import defaultdict

from .stats import interval


def load(path: str) -> dict[str, list[bool]]:
    """Problem id → correctness of each sample."""
    out = {}
    for n, line in enumerate(open(path), start=1):
        row = json.loads(line)
        if "samples" not in row:
            raise SystemExit(f"{path}:{n}: no samples (not a `stepwise sample` output row)")
        out[row["id"]] = [bool(s["correct"]) for s in row["samples"]]
    return out


def recipe_of(path: str) -> tuple[str, str | None]:
    m = re.fullmatch(r"eval-(.+?)(?:-s(\d+))?\.jsonl", os.path.basename(path))
    if not m:
        raise SystemExit(f"{path}: expected a name eval-<recipe>[-s<seed>].jsonl")
    return m.group(1), m.group(2)


def main() -> None:
    files = sys.argv[1:]
    runs: dict[str, dict[str, dict[str, list[bool]]]] = defaultdict(dict)
    for f in files:
        recipe, seed = recipe_of(f)
        runs[recipe][seed or "-"] = load(f)
    ids = sorted(set.intersection(*(set(r) for seeds in runs.values() for r in seeds.values())))
    if not ids:
        raise SystemExit("the files share no problem")
    per_problem: dict[str, list[float]] = {}
    out = {"world": "tiny", "problems": len(ids), "rows": [], "paired": []}
    for recipe, seeds in runs.items():
        acc = [sum(sum(s[i]) / len(s[i]) for s in seeds.values()) / len(seeds) for i in ids]
        per_problem[recipe] = acc
        mean, ci = interval(acc)
        out["rows"].append({
            "recipe": recipe,
            "seeds": {k: round(sum(sum(s[i]) for i in ids) / sum(len(s[i]) for i in ids), 4) for k, s in seeds.items()},
            "samplesPerProblem": sorted({len(s[i]) for s in seeds.values() for i in ids}),
            "accuracy": round(mean, 4),
            "ci95": ci,
        })
    names = list(runs)
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            x, y = names[b], names[a]
            d = [p - q for p, q in zip(per_problem[x], per_problem[y])]
            mean, ci = interval(d)
            entry = {"difference": f"{x} - {y}", "mean": round(mean, 4), "ci95": ci,
                     "better": sum(v > 0 for v in d), "worse": sum(v < 0 for v in d)}
            # Fine-tunes with the same seed share their batch order: the difference seed by seed.
            shared = [k for k in runs[x] if k in runs[y] and k != "-"]
            if shared:
                entry["bySeed"] = {k: round(sum(sum(runs[x][k][i]) / len(runs[x][k][i]) - sum(runs[y][k][i]) / len(runs[y][k][i])
                                               for i in ids) / len(ids), 4) for k in shared}
            out["paired"].append(entry)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
