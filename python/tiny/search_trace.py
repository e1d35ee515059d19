"""What a search did, from its trace (`stepwise search --out`, chunk-reset or best-of-n),
each attempt checked against the exact truth after the run (docs/tiny.md, "Search with each
judge"). Scoring only: nothing here feeds a training target, filter or choice.

    python3 -m tiny.search_trace --problems problems.jsonl --search search-chunk-reset.jsonl
    python3 -m tiny.search_trace --problems problems.jsonl --search search-best-of-4.jsonl

Best-of-N: problems whose pool of N holds a right answer (what a perfect judge would reach),
problems where the judge's pick is right, problems whose N candidates are one text, and problems
where every candidate got the same score (the pick is then the first candidate, plain sampling's
solution), at 0 (some chunk of each called Negative) or not.

Chunk-reset: attempts, how many the judge accepted and rejected, attempts that repeated an
earlier attempt at the same chunk word for word, problems that ended on a fallback (every attempt
at some chunk rejected) and how many of those were right anyway, accuracy on problems with and
without a reset; and the judge's verdicts on attempts whose earlier chunks were right, against
the exact truth of the attempted chunk (an attempt after a wrong chunk has no defined truth),
over all attempts and over distinct ones (a repeated attempt gets the judge's earlier verdict).
Per chunk position (the attempts from one prefix whose chunks are right): whether the first
attempt was right, whether any attempt was, and whether the chunk kept (accepted, or the fallback)
was right: what the resets fixed and what they broke.
"""

from __future__ import annotations

import argparse
import json

from .task import first_error, parse_question


def prefix(trace: dict[int, dict], node: dict) -> list[str]:
    """The chunks before a trace node: its accepted (or fallback) ancestors, oldest first."""
    chunks: list[str] = []
    parent = node["parent"]
    while parent is not None:
        chunks.append(trace[parent]["text"])
        parent = trace[parent]["parent"]
    return chunks[::-1]


def best_of_n(path: str) -> dict:
    n = any_right = chosen_right = tied = tied_right = tied_zero = same = 0
    for line in open(path):
        row = json.loads(line)
        candidates = [t for t in row["trace"] if t.get("label", "").startswith("candidate")]
        n += 1
        any_right += any(t.get("answer") == row["gold"] for t in candidates)
        chosen_right += bool(row["correct"])
        same += len({t["text"] for t in candidates}) == 1
        if len({t.get("score") for t in candidates}) == 1:
            tied += 1
            tied_zero += candidates[0].get("score") == 0
            tied_right += bool(row["correct"])
    return {"world": "tiny", "problems": n, "poolHasRightAnswer": any_right, "chosenRight": chosen_right,
            "allCandidatesSameText": same, "allCandidatesTied": tied, "tiedAtZero": tied_zero, "rightWhenTied": tied_right}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", required=True)
    ap.add_argument("--search", required=True)
    args = ap.parse_args()
    first = json.loads(open(args.search).readline())
    if first["strategy"] == "best-of-n":
        print(json.dumps(best_of_n(args.search), indent=2))
        return
    questions = {r["id"]: r["question"] for r in map(json.loads, open(args.problems))}
    attempts = accepted = repeated = 0
    fallback = fallback_right = reset = reset_right = plain = plain_right = 0
    # judge verdict × exact truth of the attempted chunk
    acc_right = acc_wrong = rej_right = rej_wrong = 0
    # the same on distinct attempts (a repeated attempt gets the judge's earlier verdict)
    distinct = [0, 0, 0, 0]
    positions = first_wrong = any_right_after_wrong = fixed = broken = 0
    for line in open(args.search):
        row = json.loads(line)
        problem = parse_question(questions[row["id"]])
        if problem is None:
            raise SystemExit(f"{args.problems}: {row['id']}: question does not parse")
        stats = row["stats"]
        attempts += stats["attempts"]
        repeated += stats["repeatedAttempts"]
        if stats["fallbacks"] > 0:
            fallback += 1
            fallback_right += bool(row["correct"])
        if stats["resets"] > 0:
            reset += 1
            reset_right += bool(row["correct"])
        else:
            plain += 1
            plain_right += bool(row["correct"])
        trace = {n["id"]: n for n in row["trace"]}
        seen: set[tuple[str, ...]] = set()
        for node in row["trace"]:
            ok = node["status"] == "accepted"
            accepted += ok
            before = prefix(trace, node)
            fe = first_error(problem, before + [node["text"]])
            if 0 <= fe < len(before):
                continue
            wrong = fe == len(before)
            key = (*before, node["text"])
            if key not in seen:
                seen.add(key)
                distinct[(0 if ok else 2) + wrong] += 1
            acc_right += ok and not wrong
            acc_wrong += ok and wrong
            rej_right += (not ok) and not wrong
            rej_wrong += (not ok) and wrong
        groups: dict[object, list[dict]] = {}
        for node in row["trace"]:
            groups.setdefault(node["parent"], []).append(node)
        for group in groups.values():
            group.sort(key=lambda node: node["id"])
            before = prefix(trace, group[0])
            wrong = [first_error(problem, before + [node["text"]]) == len(before) for node in group]
            if 0 <= first_error(problem, before + [group[0]["text"]]) < len(before):
                continue
            kept = [w for node, w in zip(group, wrong) if node["status"] in ("accepted", "fallback")]
            if not kept:
                continue
            positions += 1
            if wrong[0]:
                first_wrong += 1
                any_right_after_wrong += not all(wrong)
                fixed += not kept[0]
            else:
                broken += kept[0]
    n = plain + reset
    print(json.dumps({
        "world": "tiny",
        "problems": n,
        "attempts": attempts,
        "accepted": accepted,
        "rejected": attempts - accepted,
        "repeatedAttempts": repeated,
        "problemsWithFallback": fallback,
        "rightWithFallback": fallback_right,
        "accuracyWithoutReset": round(plain_right / plain, 4) if plain else None,
        "problemsWithoutReset": plain,
        "accuracyWithReset": round(reset_right / reset, 4) if reset else None,
        "problemsWithReset": reset,
        "chunkPositions": {"afterRightChunks": positions, "firstAttemptWrong": first_wrong,
                           "someAttemptRightWhereFirstWrong": any_right_after_wrong,
                           "fixed": fixed, "broken": broken},
        "verdictsOnAttemptsAfterRightChunks": {
            "acceptedRight": acc_right, "acceptedWrong": acc_wrong,
            "rejectedRight": rej_right, "rejectedWrong": rej_wrong,
            "specificity": round(acc_right / (acc_right + rej_right), 4) if acc_right + rej_right else None,
            "sensitivity": round(rej_wrong / (rej_wrong + acc_wrong), 4) if rej_wrong + acc_wrong else None,
        },
        "verdictsOnDistinctAttemptsAfterRightChunks": {
            "acceptedRight": distinct[0], "acceptedWrong": distinct[1],
            "rejectedRight": distinct[2], "rejectedWrong": distinct[3],
            "specificity": round(distinct[0] / (distinct[0] + distinct[2]), 4) if distinct[0] + distinct[2] else None,
            "sensitivity": round(distinct[3] / (distinct[3] + distinct[1]), 4) if distinct[3] + distinct[1] else None,
        },
    }, indent=2))


if __name__ == "__main__":
    main()
