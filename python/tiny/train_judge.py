"""SFT of the tiny generative judge on stepwise's judge RL export (`stepwise export --task
judge-rl --format trl`): each row is the judge prompt of one chunk and the chunk's Monte Carlo
label. The target is StepWiser's form — a short analysis, then the verdict — with the analysis
redoing the chunk's own arithmetic beside the chunk's result (`a<op>b=<a op b> vs <c>`), then `\\boxed{Positive}` or
`\\boxed{Negative}` from the row's label. The judge starts from the policy's weights (its
vocabulary extends the policy's), as StepWiser's judges start from the policy's base model.

    python3 -m tiny.train_judge --data judge-rl.jsonl --init POLICY_CKPT --out build/tiny/judge
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
from .task import KIND_OF_SYMBOL, strip_tags
from .vocab import judge_vocab

STEP_RE = re.compile(r"^(-?\d+)([+\-×])(\d+)=(-?\d+)")


def flatten(messages: list[dict]) -> str:
    """src/models/gguf.ts flattenMessages."""
    return "".join(f"{m['role']}: {m['content']}\n\n" for m in messages) + "assistant: "


def new_chunk(user: str) -> str:
    a = user.index("\n\n## New reasoning chunk\n") + len("\n\n## New reasoning chunk\n")
    return user[a : user.rindex("\n\n## Task\n")]


def analysis(chunk: str) -> str:
    """Redo the chunk's arithmetic and set the result beside the chunk's own: `38-3=35 vs 35 `
    (the two numbers side by side make the comparison a tiny network can learn)."""
    m = STEP_RE.match(strip_tags(chunk))
    if not m:
        return ""
    a, sym, b, c = int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4))
    kind = KIND_OF_SYMBOL[sym]
    value = a + b if kind == "add" else a - b if kind == "subtract" else a * b
    return f"{a}{sym}{b}={value} vs {c} "


def load_rows(path: str) -> list[tuple[str, str, str]]:
    rows = []
    for line in open(path):
        r = json.loads(line)
        prompt = r["prompt"]
        label = r["label"]
        label = label if isinstance(label, str) else ("Positive" if label else "Negative")
        user = next(m["content"] for m in prompt if m["role"] == "user")
        rows.append((flatten(prompt), analysis(new_chunk(user)) + f"\\boxed{{{label}}}", label))
    return rows


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
    outs = generate(model, [[vocab.bos] + vocab.encode(p) for p, _, _ in rows], 24, 0.0, vocab.eos, gen)
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
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    vocab = judge_vocab()
    rows = load_rows(args.data)
    rng.shuffle(rows)
    n_valid = max(1, int(len(rows) * args.valid_share))
    valid, train = rows[:n_valid], rows[n_valid:]
    ck = torch.load(args.init, map_location="cpu")
    base = Config(**ck["config"])
    cfg = Config(**{**ck["config"], "vocab": len(vocab)})
    model = Decoder(cfg)
    model.load_state_dict(grow(ck["model"], base.vocab, len(vocab)))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.01)
    log = open(os.path.join(args.out, "log.jsonl"), "a")
    log.write(json.dumps({"start": {"config": cfg.to_dict(), "args": vars(args), "rows": len(rows),
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
