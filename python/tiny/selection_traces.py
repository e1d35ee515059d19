"""Scoring only, after every fine-tune of the data selection ablation has been trained: what the
two picks of `stepwise select` hold, checked against exact step truth (tiny.task.first_error).
Nothing written here is read by a training step (test/tiny/lineage.test.ts checks that
python/tiny/data_selection.sh never runs this module).

For the correct responses of each problem (final answer right): how many have a wrong step all the
same (a slip that a later line undid, or a skipped or repeated operation that landed on the
answer), how the judge's mean chunk score separates those from clean ones, and, for each pick,
how many picked responses are flawed and on how many problems the two picks differ in text.

    python3 -m tiny.selection_traces --samples samples.jsonl --selected selected.jsonl
"""

from __future__ import annotations

import argparse
import json

from .task import first_error, parse_question, split_chunks


def flawed(question: str, text: str) -> bool:
    problem = parse_question(question)
    if problem is None:
        raise SystemExit(f"not a tiny question: {question!r}")
    return first_error(problem, split_chunks(text)) != -1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", required=True, help="stepwise sample output (the candidates)")
    ap.add_argument("--selected", required=True, help="stepwise select output on those samples")
    args = ap.parse_args()
    samples = {}
    for line in open(args.samples):
        r = json.loads(line)
        samples[r["id"]] = r
    n_samples = n_correct = n_flawed = 0
    distinct = []
    scores = {True: [], False: []}
    picks = {"chosen": [0, 0], "outcomeOnly": [0, 0]}  # [picked, flawed]
    differ_text = differ_index = with_flawed_candidate = both_available = 0
    tie_all = 0
    mixed_picks = {"chosen": 0, "outcomeOnly": 0}  # flawed picks on problems with clean and flawed candidates
    chunks = {True: [], False: []}
    for line in open(args.selected):
        row = json.loads(line)
        s = samples[row["id"]]
        q = s["question"]
        n_samples += len(s["samples"])
        correct = [(i, x["text"]) for i, x in enumerate(s["samples"]) if x["correct"]]
        n_correct += len(correct)
        bad = {i: flawed(q, t) for i, t in correct}
        n_flawed += sum(bad.values())
        if correct:
            distinct.append(len({t for _, t in correct}))
        mixed = any(bad.values()) and not all(bad.values())
        with_flawed_candidate += mixed
        for i, t in correct:
            chunks[bad[i]].append(len(split_chunks(t)))
        by_index = {c["index"]: c["meanScore"] for c in row["candidates"]}
        for i, b in bad.items():
            if i in by_index:
                scores[b].append(by_index[i])
        if len(set(by_index.values())) <= 1 and len({t for _, t in correct}) > 1:
            tie_all += 1
        for pick in picks:
            got = row[pick]
            if got is not None:
                picks[pick][0] += 1
                picks[pick][1] += flawed(q, got["text"])
                if mixed:
                    mixed_picks[pick] += flawed(q, got["text"])
        if row["chosen"] is not None and row["outcomeOnly"] is not None:
            both_available += 1
            differ_index += row["chosen"]["index"] != row["outcomeOnly"]["index"]
            differ_text += row["chosen"]["text"] != row["outcomeOnly"]["text"]

    def mean(xs):
        return round(sum(xs) / len(xs), 4) if xs else None

    out = {
        "world": "tiny",
        "scoring": "exact step truth (tiny.task), after training; never a training input",
        "problems": len(samples),
        "samples": n_samples,
        "correctSamples": n_correct,
        "correctButFlawed": n_flawed,
        "distinctCorrectTextsPerProblem": mean(distinct),
        "problemsWithCleanAndFlawedCorrect": with_flawed_candidate,
        "problemsWithDistinctCandidatesAllTied": tie_all,
        "judgeMeanScore": {"clean": mean(scores[False]), "flawed": mean(scores[True]),
                           "clean n": len(scores[False]), "flawed n": len(scores[True])},
        "chunksPerCorrectResponse": {"clean": mean(chunks[False]), "flawed": mean(chunks[True])},
        "picks": {k: {"responses": v[0], "flawed": v[1]} for k, v in picks.items()},
        "flawedPicksOnProblemsWithCleanAndFlawed": mixed_picks,
        "picksDiffer": {"problems": both_available, "index": differ_index, "text": differ_text},
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
