"""Exact step truth for stepwise's own files about the tiny world.

    python3 -m tiny.truth processbench --samples samples.jsonl --out pb.jsonl
        One ProcessBench-format row per sample of `stepwise sample` output, `label` = the exact
        first error (−1 = every chunk right). Samples cut off before their last chunk (all chunks
        right but unfinished) have no ProcessBench label and are left out (counted on stderr).
    python3 -m tiny.truth balanced --input pb.jsonl --count 100 --out balanced.jsonl
        ProcessBench rows alternating with and without an error.
    python3 -m tiny.truth judge-chunks --predictions pb.predictions.jsonl --rows pb.jsonl
        A judge's chunk verdicts against the exact truth (chunks up to the first error).
    python3 -m tiny.truth agreement --labels labels.jsonl
        For each Monte Carlo signal in `stepwise label` output: how often its first error equals
        the exact first error, with a 95% Wilson interval (JSON on stdout).
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from .task import first_error, parse_question, split_chunks

GENERATOR = "stepwise-tiny-policy (real tiny network trained by this project)"


def wilson(k: int, n: int, z: float = 1.959964) -> list[float]:
    if n == 0:
        return [0.0, 1.0]
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return [round(c - h, 4), round(c + h, 4)]


def chunk_texts(sample: dict) -> list[str]:
    chunks = sample.get("chunks")
    if chunks:
        return [c["text"] if isinstance(c, dict) else str(c) for c in chunks]
    return split_chunks(sample["text"])


def processbench(args) -> None:
    out = open(args.out, "w")
    kept = unfinished = unparsed = 0
    for line in open(args.samples):
        rec = json.loads(line)
        problem = parse_question(rec["question"])
        if problem is None:
            unparsed += 1
            continue
        for k, s in enumerate(rec["samples"]):
            steps = chunk_texts(s)
            label = first_error(problem, steps)
            if label == len(steps):
                unfinished += 1
                continue
            row = {
                "id": f"{rec['id']}#{k}",
                "generator": GENERATOR,
                "problem": rec["question"],
                "answer": rec["gold"],
                "steps": steps,
                "final_answer_correct": bool(s["correct"]),
                "label": label,
            }
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            kept += 1
            if args.first_only:
                break
    print(json.dumps({"rows": kept, "unfinished": unfinished, "unparsedQuestions": unparsed}), file=sys.stderr)


def balanced(args) -> None:
    """ProcessBench rows alternating with and without an error (the demo's judge set)."""
    rows = [json.loads(line) for line in open(args.input)]
    err = [r for r in rows if r["label"] >= 0]
    ok = [r for r in rows if r["label"] < 0]
    out = open(args.out, "w")
    n = 0
    for a, b in zip(err, ok):
        for r in (a, b):
            if n < args.count:
                out.write(json.dumps(r, ensure_ascii=False) + "\n")
                n += 1
    print(json.dumps({"rows": n}), file=sys.stderr)


def judge_chunks(args) -> None:
    """Chunk-level agreement of a judge's verdicts (`stepwise eval processbench` predictions,
    `scores`: 1 = Positive, 0 = Negative, judged in order up to the first Negative) with the exact
    truth, on chunks up to and including each row's exact first error (after it, a chunk's
    rightness is not defined)."""
    truth = {json.loads(line)["id"]: json.loads(line) for line in open(args.rows)}
    tp = tn = fp = fn = 0
    # The same counts by the number of operation lines in the chunk (the sim fit's "by chunk
    # length", docs/sim.md), and replies without a verdict.
    by_ops: dict[int, list[int]] = {}
    for line in open(args.predictions):
        pred = json.loads(line)
        row = truth.get(pred["id"])
        if row is None:
            continue
        label = row["label"]
        for k, score in enumerate(pred.get("scores") or []):
            if label >= 0 and k > label:
                break
            wrong = k == label
            negative = score is not None and score < 0.5
            ops = min(3, len([x for x in row["steps"][k].split("\n") if x.strip()]))
            cell = by_ops.setdefault(ops, [0, 0, 0, 0])
            if wrong:
                tp += negative
                fn += not negative
                cell[0] += negative
                cell[1] += not negative
            else:
                tn += not negative
                fp += negative
                cell[2] += not negative
                cell[3] += negative
    n = tp + tn + fp + fn
    print(json.dumps({
        "chunks": n,
        "accuracy": round((tp + tn) / n, 4) if n else None,
        "ci95": wilson(tp + tn, n),
        "sensitivity": round(tp / (tp + fn), 4) if tp + fn else None,
        "specificity": round(tn / (tn + fp), 4) if tn + fp else None,
        "wrongChunks": tp + fn,
        "rightChunks": tn + fp,
        "byOperations": {("3+" if k == 3 else str(k)): {
            "sensitivity": round(c[0] / (c[0] + c[1]), 4) if c[0] + c[1] else None, "wrongChunks": c[0] + c[1],
            "specificity": round(c[2] / (c[2] + c[3]), 4) if c[2] + c[3] else None, "rightChunks": c[2] + c[3],
        } for k, c in sorted(by_ops.items())},
    }, indent=2))


def agreement(args) -> None:
    per: dict[str, dict] = {}
    rows = 0
    for line in open(args.labels):
        rec = json.loads(line)
        problem = parse_question(rec["problem"])
        if problem is None:
            continue
        steps = [c["text"] for c in rec["chunks"]]
        exact = first_error(problem, steps)
        if exact == len(steps):
            continue  # unfinished: no exact first error
        rows += 1
        for signal, mc in rec["firstError"].items():
            s = per.setdefault(signal, {"equal": 0, "n": 0, "errRows": 0, "errEqual": 0, "okRows": 0, "okEqual": 0,
                                        "early": 0, "late": 0})
            s["n"] += 1
            s["equal"] += mc == exact
            if exact >= 0:
                s["errRows"] += 1
                s["errEqual"] += mc == exact
            else:
                s["okRows"] += 1
                s["okEqual"] += mc == -1
            if mc != exact:
                # earlier = MC flags a chunk before the exact first error (or flags a correct solution)
                if exact == -1 or (mc != -1 and mc < exact):
                    s["early"] += 1
                else:
                    s["late"] += 1
    result = {"world": "tiny", "solutions": rows, "signals": {}}
    for signal, s in per.items():
        result["signals"][signal] = {
            "agreement": round(s["equal"] / s["n"], 4) if s["n"] else None,
            "ci95": wilson(s["equal"], s["n"]),
            "solutions": s["n"],
            "withError": {"solutions": s["errRows"], "agreement": round(s["errEqual"] / s["errRows"], 4) if s["errRows"] else None},
            "withoutError": {"solutions": s["okRows"], "agreement": round(s["okEqual"] / s["okRows"], 4) if s["okRows"] else None},
            "disagreeEarlier": s["early"],
            "disagreeLater": s["late"],
        }
    print(json.dumps(result, indent=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("processbench")
    p.add_argument("--samples", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--first-only", action="store_true", help="one sample per problem")
    a = sub.add_parser("agreement")
    a.add_argument("--labels", required=True)
    b = sub.add_parser("balanced")
    b.add_argument("--input", required=True)
    b.add_argument("--count", type=int, required=True)
    b.add_argument("--out", required=True)
    j = sub.add_parser("judge-chunks")
    j.add_argument("--predictions", required=True)
    j.add_argument("--rows", required=True)
    args = ap.parse_args()
    {"processbench": processbench, "agreement": agreement, "balanced": balanced,
     "judge-chunks": judge_chunks}[args.cmd](args)


if __name__ == "__main__":
    main()
