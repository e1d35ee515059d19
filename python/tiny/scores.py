"""Score finished tiny judges on the ProcessBench split (exact first errors): the ablation table
of docs/tiny.md. Reads `stepwise eval processbench` predictions only, after every judge is
trained; nothing here feeds a training choice.

    python3 -m tiny.scores build/tiny/judges > ablation.json

A run folder `<signal>-<target>-<seed>-rl` holds pb-judge-sft.json (its SFT stage) and
pb-judge.json (SFT + RL). Per row (signal, target, stage): the F1 of each seed, their mean, and a
95% interval for that mean from a bootstrap over the 300 samples (2,000 resamples, seeded; each
resample re-scores every seed's predictions). Paired differences resample both rows with the
same sample indices (the rows share the samples).
"""

from __future__ import annotations

import json
import os
import random
import re
import sys

RUN = re.compile(r"^(?P<signal>[a-z-]+?)-(?P<target>generative|verdict)-(?P<seed>\d+)-rl$")
RESAMPLES = 2000


def f1(pairs: list[tuple[int, int]]) -> float:
    err = [p == lab for lab, p in pairs if lab != -1]
    ok = [p == -1 for lab, p in pairs if lab == -1]
    ea = 100 * sum(err) / max(1, len(err))
    ca = 100 * sum(ok) / max(1, len(ok))
    return 0.0 if ea + ca == 0 else 2 * ea * ca / (ea + ca)


def predictions(report: str) -> list[tuple[int, int]]:
    path = json.load(open(report))["predictions"]
    rows = sorted((json.loads(line) for line in open(path)), key=lambda r: r["id"])
    return [(r["label"], r["prediction"]) for r in rows]


def interval(values: list[float]) -> list[float]:
    v = sorted(values)
    return [round(v[int(0.025 * len(v))], 1), round(v[int(0.975 * len(v)) - 1], 1)]


def main() -> None:
    folder = sys.argv[1]
    rows: dict[tuple[str, str, str], dict[int, list]] = {}
    for name in sorted(os.listdir(folder)):
        m = RUN.match(name)
        if not m:
            continue
        for stage, file in (("SFT", "pb-judge-sft.json"), ("SFT+RL", "pb-judge.json")):
            report = os.path.join(folder, name, file)
            if os.path.exists(report):
                rows.setdefault((m["signal"], m["target"], stage), {})[int(m["seed"])] = predictions(report)
    n = len(next(iter(next(iter(rows.values())).values())))
    rng = random.Random("tiny:scores")
    draws = [[rng.randrange(n) for _ in range(n)] for _ in range(RESAMPLES)]

    def seed_mean(key, idx=None):
        runs = rows[key].values()
        return sum(f1([p[i] for i in idx] if idx else p) for p in runs) / len(rows[key])

    table = []
    boot = {key: [seed_mean(key, d) for d in draws] for key in rows}
    for key in sorted(rows):
        seeds = rows[key]
        table.append({"signal": key[0], "target": key[1], "stage": key[2], "seeds": sorted(seeds),
                      "f1BySeed": {s: round(f1(p), 1) for s, p in sorted(seeds.items())},
                      "f1": round(seed_mean(key), 1), "ci95": interval(boot[key])})
    pairs = [
        (("rel-effective", "generative", "SFT+RL"), ("abs-q", "generative", "SFT+RL")),
        (("rel-effective", "generative", "SFT+RL"), ("rel-ratio", "generative", "SFT+RL")),
        (("abs-q", "generative", "SFT+RL"), ("rel-ratio", "generative", "SFT+RL")),
        (("rel-effective", "generative", "SFT"), ("abs-q", "generative", "SFT")),
        (("rel-effective", "generative", "SFT"), ("rel-ratio", "generative", "SFT")),
        (("rel-effective", "generative", "SFT+RL"), ("rel-effective", "generative", "SFT")),
        (("abs-q", "generative", "SFT+RL"), ("abs-q", "generative", "SFT")),
        (("rel-ratio", "generative", "SFT+RL"), ("rel-ratio", "generative", "SFT")),
        (("rel-effective", "verdict", "SFT+RL"), ("rel-effective", "verdict", "SFT")),
        (("rel-effective", "generative", "SFT+RL"), ("rel-effective", "verdict", "SFT+RL")),
        (("rel-effective", "generative", "SFT"), ("rel-effective", "verdict", "SFT")),
    ]
    diffs = []
    for a, b in pairs:
        if a in rows and b in rows:
            d = [x - y for x, y in zip(boot[a], boot[b])]
            diffs.append({"a": " ".join(a), "b": " ".join(b), "difference": round(seed_mean(a) - seed_mean(b), 1),
                          "ci95": interval(d)})
    print(json.dumps({"world": "tiny", "samples": n, "resamples": RESAMPLES, "rows": table, "paired": diffs},
                     indent=2))


if __name__ == "__main__":
    main()
