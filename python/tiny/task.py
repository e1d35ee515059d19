"""The miniature world's task: multi-step arithmetic with exact step truth.

Problems are the sim world's family ("Start with 7. Add 5, then multiply by 3. What is the
final number?"). A solution writes one operation per line, `a<op>b=c`, the last one also
carrying `\\boxed{answer}`, in either of stepwise's segmentations:

    paragraph (one operation per chunk)      tags (a chunk per run of one family of operations)

    7+5=12                                   <chunk>7+5=12
                                             12-3=9</chunk>
    12-3=9                                   <chunk>9×3=27 \\boxed{27}</chunk>

    9×3=27 \\boxed{27}

Operation k is right exactly when it reads `a<op>b=c` with a the true value after k operations,
<op> and b the problem's operation k, c the true value after it, and `\\boxed{}` present (and
right) on the last operation only. A chunk is right when each of its operations is; the first
chunk that is not right is the exact first error. Everything is seeded: the same seed gives the
same problems.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

SYMBOL = {"add": "+", "subtract": "-", "multiply": "×"}
KIND_OF_SYMBOL = {v: k for k, v in SYMBOL.items()}

# Splits (seed namespaces). Held-out and ProcessBench questions never appear in training.
SPLITS = ("train", "heldout", "processbench")


@dataclass(frozen=True)
class Problem:
    start: int
    ops: tuple[tuple[str, int], ...]

    @property
    def question(self) -> str:
        phrases = [f"multiply by {b}" if k == "multiply" else f"{k} {b}" for k, b in self.ops]
        phrases[0] = phrases[0][0].upper() + phrases[0][1:]
        return f"Start with {self.start}. {', then '.join(phrases)}. What is the final number?"

    def truth(self) -> list[int]:
        values = [self.start]
        for kind, b in self.ops:
            a = values[-1]
            values.append(a + b if kind == "add" else a - b if kind == "subtract" else a * b)
        return values

    @property
    def answer(self) -> int:
        return self.truth()[-1]


QUESTION_RE = re.compile(r"^Start with (-?\d+)\. (.+)\. What is the final number\?$")
OP_RE = re.compile(r"^(add|subtract|multiply by) (\d+)$", re.IGNORECASE)


def parse_question(question: str) -> Problem | None:
    m = QUESTION_RE.match(question.strip())
    if not m:
        return None
    ops = []
    for phrase in m.group(2).split(", then "):
        o = OP_RE.match(phrase)
        if not o:
            return None
        word = o.group(1).lower()
        ops.append(("multiply" if word.startswith("multiply") else word, int(o.group(2))))
    return Problem(int(m.group(1)), tuple(ops))


def draw_problem(rng: random.Random, min_steps: int = 2, max_steps: int = 4) -> Problem:
    """The sim world's family with small numbers, sized for a network trained in an hour on two
    shared cores: values stay in 1..99, additions and subtractions of 2..9, multiplications by
    2 or 3 (only while the value is at most 30)."""
    steps = rng.randint(min_steps, max_steps)
    start = rng.randint(2, 20)
    value = start
    ops = []
    for _ in range(steps):
        r = rng.random()
        if r < 0.3 and value <= 30:
            op = ("multiply", rng.randint(2, 3))
        elif r < 0.6 and value > 10:
            op = ("subtract", rng.randint(2, 9))
        elif value <= 90:
            op = ("add", rng.randint(2, 9))
        else:
            op = ("subtract", rng.randint(2, 9))
        ops.append(op)
        kind, b = op
        value = value + b if kind == "add" else value - b if kind == "subtract" else value * b
    return Problem(start, tuple(ops))


def problems(split: str, count: int, seed: int = 0) -> list[Problem]:
    """`count` distinct problems of a split. Held-out and ProcessBench problems are drawn from
    their own seeds; training problems skip every question of the other splits."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}")
    rng = random.Random(f"tiny:{split}:{seed}")
    # Training problems never include a held-out or ProcessBench question.
    seen: set[str] = reserved_questions(seed) if split == "train" else set()
    out: list[Problem] = []
    while len(out) < count:
        p = draw_problem(rng)
        if p.question not in seen:
            seen.add(p.question)
            out.append(p)
    return out


def reserved_questions(seed: int = 0, heldout: int = 2000, processbench: int = 2000) -> set[str]:
    return {p.question for p in problems("heldout", heldout, seed)} | {
        p.question for p in problems("processbench", processbench, seed)
    }


def training_stream(seed: int, reserved: set[str]):
    rng = random.Random(f"tiny:train-stream:{seed}")
    while True:
        p = draw_problem(rng)
        if p.question not in reserved:
            yield p


MODES = ("paragraph", "tags")


def step_text(problem: Problem, k: int) -> str:
    truth = problem.truth()
    kind, b = problem.ops[k]
    text = f"{truth[k]}{SYMBOL[kind]}{b}={truth[k + 1]}"
    if k == len(problem.ops) - 1:
        text += f" \\boxed{{{truth[-1]}}}"
    return text


FAMILY = {"add": "additive", "subtract": "additive", "multiply": "multiplicative"}


def chunk_groups(problem: Problem) -> list[list[int]]:
    """How a tags solution groups the operations: a chunk is a maximal run of operations of one
    family (additions and subtractions; multiplications), so a new chunk opens when the phase of
    the calculation changes. Fewer chunks than operations whenever two neighbours share a family."""
    groups: list[list[int]] = []
    for k, (kind, _) in enumerate(problem.ops):
        if groups and FAMILY[problem.ops[groups[-1][-1]][0]] == FAMILY[kind]:
            groups[-1].append(k)
        else:
            groups.append([k])
    return groups


def solution_chunks(problem: Problem, mode: str = "tags") -> list[str]:
    """The correct solution's chunks as written. `paragraph`: one operation per chunk, no tags.
    `tags`: each group of `chunk_groups` in `<chunk>…</chunk>`, its operations one per line."""
    if mode == "paragraph":
        return [step_text(problem, k) for k in range(len(problem.ops))]
    return ["<chunk>" + "\n".join(step_text(problem, k) for k in g) + "</chunk>" for g in chunk_groups(problem)]


def solution_text(problem: Problem, mode: str = "tags") -> str:
    """`paragraph`: chunks separated by a blank line; `tags`: chunks one per line (stepwise's
    written prefix under tags joins chunks with a newline and ends right after `</chunk>`)."""
    return ("\n\n" if mode == "paragraph" else "\n").join(solution_chunks(problem, mode))


STEP_RE = re.compile(r"^(-?\d+)([+\-×])(\d+)=(-?\d+)(?: \\boxed\{(-?\d+)\})?$")
TAG_RE = re.compile(r"<chunk>(.*?)</chunk>", re.DOTALL)


def strip_tags(chunk: str) -> str:
    s = chunk.strip()
    if s.startswith("<chunk>"):
        s = s[len("<chunk>"):]
    if s.endswith("</chunk>"):
        s = s[: -len("</chunk>")]
    return s.strip()


def op_is_right(problem: Problem, k: int, line: str) -> bool:
    """Operation k written as `line` (`a<op>b=c`, `\\boxed{}` on the last operation only)."""
    truth = problem.truth()
    if k >= len(problem.ops):
        return False
    m = STEP_RE.match(line.strip())
    if not m:
        return False
    a, sym, b, c, boxed = m.groups()
    kind, operand = problem.ops[k]
    last = k == len(problem.ops) - 1
    return (
        int(a) == truth[k]
        and KIND_OF_SYMBOL[sym] == kind
        and int(b) == operand
        and int(c) == truth[k + 1]
        and (boxed is not None) == last
        and (not last or int(boxed) == truth[-1])
    )


def chunk_ops(chunk: str) -> list[str]:
    """A chunk's operations: its lines (tags and blank lines left out)."""
    return [line for line in strip_tags(chunk).split("\n") if line.strip()]


def first_error(problem: Problem, chunks: list[str]) -> int:
    """Index of the first chunk that is not right; -1 when every chunk is right and the
    solution is complete. A chunk is right when it holds at least one operation and each of its
    operations is the next right one (a chunk may group several). An incomplete solution whose
    chunks are all right has its first error at the position of the missing chunk
    (len(chunks)), which callers may treat as unlabeled."""
    k = 0
    for i, chunk in enumerate(chunks):
        ops = chunk_ops(chunk)
        if not ops:
            return i
        for line in ops:
            if not op_is_right(problem, k, line):
                return i
            k += 1
    return -1 if k == len(problem.ops) else len(chunks)


def split_chunks(text: str) -> list[str]:
    """Chunks as written: each `<chunk>…</chunk>` with its tags; without tags, blank-line paragraphs."""
    found = [m.group(0) for m in TAG_RE.finditer(text)]
    if found:
        return found
    return [p for p in (s.strip() for s in text.split("\n\n")) if p]


BOXED_RE = re.compile(r"\\boxed\{(-?\d+)\}")


def final_answer(text: str) -> int | None:
    found = BOXED_RE.findall(text)
    return int(found[-1]) if found else None


def problem_row(split: str, i: int, p: Problem) -> dict:
    return {"id": f"tiny-{split}/{i}", "question": p.question, "answer": str(p.answer), "steps": len(p.ops)}


def main() -> None:
    """Write a split's problems as JSONL for `stepwise --dataset jsonl --path FILE`."""
    import argparse
    import json
    import sys

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--split", choices=SPLITS, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--offset", type=int, default=0, help="skip the first problems of the split")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="output file (default stdout)")
    args = ap.parse_args()
    ps = problems(args.split, args.offset + args.count, args.seed)[args.offset:]
    out = open(args.out, "w") if args.out else sys.stdout
    for i, p in enumerate(ps, start=args.offset):
        out.write(json.dumps(problem_row(args.split, i, p), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
