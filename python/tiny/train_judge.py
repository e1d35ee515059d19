"""SFT of the tiny generative judge on stepwise's judge RL export (`stepwise export --task
judge-rl --format trl`): each row is the judge prompt of one chunk and the chunk's Monte Carlo
label. The target is StepWiser's form — a short analysis, then the verdict. The analysis redoes
the chunk: for each of its lines, the line the problem and the previous steps call for
(previous result, the problem's next operation, its value), e.g. `38-3=35`; then
`\\boxed{Positive}` or `\\boxed{Negative}` from the row's label (never from the exact truth).
With --consistent-only, rows whose analysis disagrees with their label are dropped (rejection
sampling of analyses against the label: the judge RL reward's rule). Each row is also trained
in the `[Step i]` layout stepwise uses for paragraph-segmented solutions. The judge starts from
a judge base (the policy trained further; its vocabulary extends the policy's), as StepWiser's
judges start from a base model.

    python3 -m tiny.train_judge --data judge-rl.jsonl --init BASE_CKPT --out build/tiny/judge
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import time

import torch
import torch.nn.functional as F

from .model import Config, Decoder, generate
from .task import SYMBOL, parse_question
from .vocab import judge_vocab

STEP_RE = re.compile(r"^(-?\d+)([+\-×])(\d+)=(-?\d+)")
HISTORY_MARK = "\n\n## Previous reasoning steps\n"
CHUNK_MARK = "\n\n## New reasoning chunk\n"
TAG_RE = re.compile(r"<chunk>(.*?)</chunk>", re.DOTALL)


def flatten(messages: list[dict]) -> str:
    """src/models/gguf.ts flattenMessages."""
    return "".join(f"{m['role']}: {m['content']}\n\n" for m in messages) + "assistant: "


def new_chunk(user: str) -> str:
    a = user.index(CHUNK_MARK) + len(CHUNK_MARK)
    return user[a : user.rindex("\n\n## Task\n")]


def section(user: str, mark: str, end: str) -> str:
    a = user.index(mark) + len(mark)
    return user[a : user.index(end, a)]


def written_lines(text: str) -> list[str]:
    """Operation lines of chunks as written (tags, `[Step i]` headers and blank lines left out)."""
    out = []
    for line in text.replace("<chunk>", "\n").replace("</chunk>", "\n").split("\n"):
        line = line.strip()
        if line and not line.startswith("[Step ") and not line.startswith("(none"):
            out.append(line)
    return out


def analysis(user: str, compare: bool = False) -> tuple[str, bool]:
    """StepWiser's short analysis, made for a tiny network: for each line of the new chunk,
    the line the problem and the previous steps call for (the previous result, the problem's
    next operation, its value; `\\boxed{}` on the last operation), computed afresh. Returns the
    analysis and whether every line of the chunk equals it (the analysis's own verdict)."""
    problem = parse_question(section(user, "## Problem\n", HISTORY_MARK))
    history = written_lines(section(user, HISTORY_MARK, CHUNK_MARK))
    chunk = written_lines(new_chunk(user))
    if problem is None or not chunk:
        return "", False
    prev, k = problem.start, 0
    for line in history:
        m = STEP_RE.match(line)
        if m:
            prev = int(m.group(4))
        k += 1
    expected, same = [], True
    for line in chunk:
        if k >= len(problem.ops):
            expected.append("no step left")
            same = False
            break
        kind, b = problem.ops[k]
        value = prev + b if kind == "add" else prev - b if kind == "subtract" else prev * b
        want = f"{prev}{SYMBOL[kind]}{b}={value}"
        if k == len(problem.ops) - 1:
            want += f" \\boxed{{{value}}}"
        # With `compare`, the chunk's own line is set beside the recomputed one (`39 vs 49`-style
        # comparisons next to each other are easier for a tiny network than across the prompt).
        expected.append(f"{want} vs {line}" if compare else want)
        same = same and line == want
        m = STEP_RE.match(line)
        prev = int(m.group(4)) if m else value
        k += 1
    return "\n".join(expected) + "\n", same


def as_paragraphs(user: str) -> str | None:
    """The same judge prompt with the earlier chunks as `[Step i]` blocks, as stepwise renders
    them for paragraph-segmented solutions (`eval processbench` shows ProcessBench rows so):
    None when the prompt has no tagged history."""
    past = section(user, HISTORY_MARK, CHUNK_MARK)
    chunks = TAG_RE.findall(past)
    if not chunks:
        return None
    blocks = "\n\n".join(f"[Step {i + 1}]\n{c}" for i, c in enumerate(chunks))
    a = user.index(HISTORY_MARK) + len(HISTORY_MARK)
    return user[:a] + blocks + user[user.index(CHUNK_MARK, a):]


def load_rows(path: str, consistent_only: bool = False, compare: bool = False) -> tuple[list, dict]:
    """(prompt, target, label) per export row. With `consistent_only`, rows whose analysis
    disagrees with the row's Monte Carlo label are dropped: rejection sampling of analyses
    against the label, the judge RL reward's rule."""
    rows, counts = [], {"rows": 0, "dropped": 0, "Positive": 0, "Negative": 0}
    for line in open(path):
        r = json.loads(line)
        prompt = r["prompt"]
        label = r["label"]
        label = label if isinstance(label, str) else ("Positive" if label else "Negative")
        user = next(m["content"] for m in prompt if m["role"] == "user")
        text, same = analysis(user, compare)
        counts["rows"] += 1
        if consistent_only and same != (label == "Positive"):
            counts["dropped"] += 1
            continue
        counts[label] += 1
        target = text + f"\\boxed{{{label}}}"
        group = [(flatten(prompt), target, label)]
        # Also the paragraph rendering of the same row, so the judge reads both layouts.
        other = as_paragraphs(user)
        if other is not None:
            msgs = [{**m, "content": other} if m["role"] == "user" else m for m in prompt]
            group.append((flatten(msgs), target, label))
            counts["paragraphCopies"] = counts.get("paragraphCopies", 0) + 1
        rows.append(group)
    return rows, counts


def grow(state: dict, old_vocab: int, new_vocab: int) -> dict:
    """Policy weights with rows for the judge's added tokens (their mean, a neutral start)."""
    out = dict(state)
    for key in ("embed.weight", "out.weight"):
        w = state[key]
        extra = w.mean(0, keepdim=True).repeat(new_vocab - old_vocab, 1)
        out[key] = torch.cat([w, extra], 0)
    return out


def verdict_accuracy(model, vocab, rows, seed: int) -> float:
    gen = torch.Generator().manual_seed(seed)
    outs = generate(model, [[vocab.bos] + vocab.encode(p) for p, _, _ in rows], 64, 0.0, vocab.eos, gen)
    right = 0
    for o, (_, _, label) in zip(outs, rows):
        text = vocab.decode(o)
        right += f"\\boxed{{{label}}}" in text
    return right / max(1, len(rows))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--init", required=True, help="policy checkpoint to start from")
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--valid-share", type=float, default=0.1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--consistent-only", action="store_true",
                    help="drop rows whose analysis disagrees with their Monte Carlo label")
    ap.add_argument("--balance", action="store_true", help="equal Positive and Negative rows in training")
    ap.add_argument("--analysis", choices=["recompute", "compare"], default="recompute",
                    help="recompute: the lines the step calls for; compare: each beside the chunk's own line")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    vocab = judge_vocab()
    groups, counts = load_rows(args.data, args.consistent_only, args.analysis == "compare")
    rng.shuffle(groups)
    n_valid = max(1, int(len(groups) * args.valid_share))
    # A row and its paragraph copy stay on the same side of the split; validation uses the
    # rendering stepwise sends under the row's own segmentation (the first of each group).
    valid = [g[0] for g in groups[:n_valid]]
    train = [r for g in groups[n_valid:] for r in g]
    rows = train
    if args.balance:
        # Equal verdict classes in training: the rarer class's rows repeated.
        pos = [r for r in train if r[2] == "Positive"]
        neg = [r for r in train if r[2] == "Negative"]
        few, many = (pos, neg) if len(pos) < len(neg) else (neg, pos)
        train = many + [few[i % len(few)] for i in range(len(many))] if few else train
    ck = torch.load(args.init, map_location="cpu")
    base = Config(**ck["config"])
    cfg = Config(**{**ck["config"], "vocab": len(vocab)})
    model = Decoder(cfg)
    model.load_state_dict(grow(ck["model"], base.vocab, len(vocab)))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.01)
    log = open(os.path.join(args.out, "log.jsonl"), "a")
    log.write(json.dumps({"start": {"config": cfg.to_dict(), "args": vars(args), "rows": len(groups), "counts": counts,
                                    "train": len(train), "valid": len(valid),
                                    "parameters": model.parameters_count()}}) + "\n")
    log.flush()
    encoded = [([vocab.bos] + vocab.encode(p), vocab.encode(t) + [vocab.eos]) for p, t, _ in train]
    t0 = time.time()
    running = None
    for step in range(1, args.steps + 1):
        lr = args.lr * min(1.0, step / 50) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / args.steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        model.train()
        batch = [encoded[rng.randrange(len(encoded))] for _ in range(args.batch)]
        T = max(len(p) + len(t) for p, t in batch)
        x = torch.zeros(len(batch), T, dtype=torch.long)
        m = torch.zeros(len(batch), T)
        for i, (p, t) in enumerate(batch):
            x[i, : len(p) + len(t)] = torch.tensor(p + t)
            m[i, len(p) : len(p) + len(t)] = 1
        logits = model(x[:, :-1])
        loss_tok = F.cross_entropy(logits.reshape(-1, cfg.vocab), x[:, 1:].reshape(-1), reduction="none")
        mask = m[:, 1:].reshape(-1)
        loss = (loss_tok * mask).sum() / mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
        if step % 25 == 0:
            log.write(json.dumps({"step": step, "loss": round(running, 4), "seconds": round(time.time() - t0, 1)}) + "\n")
            log.flush()
        if step % args.eval_every == 0 or step == args.steps:
            seconds = time.time() - t0
            acc = verdict_accuracy(model, vocab, valid, args.seed)
            torch.save({"model": model.state_dict(), "config": cfg.to_dict(), "step": step,
                        "seconds": round(seconds, 1), "seed": args.seed},
                       os.path.join(args.out, f"ckpt-{step}.pt"))
            log.write(json.dumps({"step": step, "eval": {"validVerdictAccuracy": acc, "n": len(valid)},
                                  "seconds": round(seconds, 1)}) + "\n")
            log.flush()


if __name__ == "__main__":
    main()
