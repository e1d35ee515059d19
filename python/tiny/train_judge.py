"""SFT of the tiny judge on stepwise's judge RL export (`stepwise export --task judge-rl --format
trl`, balanced 50/50 by the export). Each row is the judge prompt of one chunk and the chunk's
Monte Carlo label; the target's verdict is that label. Nothing here reads the task's exact truth:
the inputs are the export (Monte Carlo labels) and, for a generative target, analyses written by
a network (`tiny.judge_analyses`: the policy's own re-derivation of the chunk). No row is
filtered; 10% of the rows (seeded) are held out and the judge's verdict agreement with their
Monte Carlo labels is logged; the checkpoint kept is the last one (fixed before training).

    --target generative     StepWiser's form: the analysis, then \\boxed{Positive|Negative}
    --target verdict        the verdict alone (the discriminative judge of the ablation)

    python3 -m tiny.train_judge --data judge-rl.jsonl --init POLICY.pt --out DIR \
        [--target generative --analyses analyses.jsonl]
"""

from __future__ import annotations

import argparse
import json
import random

import torch

from .model import Config, Decoder, generate
from .trainer import cosine, pad, run, sft_loss
from .vocab import judge_vocab


def flatten(messages: list[dict]) -> str:
    """src/models/gguf.ts flattenMessages: how the gguf backend sends a judge's messages."""
    return "".join(f"{m['role']}: {m['content']}\n\n" for m in messages) + "assistant: "


def label_of(row: dict) -> str:
    label = row["label"]
    return label if isinstance(label, str) else ("Positive" if label else "Negative")


def load_rows(path: str, analyses: str | None) -> list[tuple[str, str, str]]:
    """(prompt text, target, Monte Carlo label) per export row."""
    written = {}
    if analyses:
        for line in open(analyses):
            r = json.loads(line)
            written[r["id"]] = r["analysis"]
    rows = []
    for line in open(path):
        r = json.loads(line)
        label = label_of(r)
        verdict = f"\\boxed{{{label}}}"
        if analyses is not None:
            if r["id"] not in written:
                raise SystemExit(f"{analyses}: no analysis for row {r['id']} of {path}")
            target = written[r["id"]] + "\n" + verdict
        else:
            target = verdict
        rows.append((flatten(r["prompt"]), target, label))
    return rows


def grow(state: dict, old_vocab: int, new_vocab: int) -> dict:
    """Policy weights with rows for the judge's added tokens (their mean, a neutral start)."""
    out = dict(state)
    for key in ("embed.weight", "out.weight"):
        w = state[key]
        if w.shape[0] == new_vocab:
            continue
        extra = w.mean(0, keepdim=True).repeat(new_vocab - old_vocab, 1)
        out[key] = torch.cat([w, extra], 0)
    return out


def judge_model(init: str):
    """A judge network from a policy or judge checkpoint (vocabulary grown to the judge's)."""
    vocab = judge_vocab()
    ck = torch.load(init, map_location="cpu")
    cfg = Config(**{**ck["config"], "vocab": len(vocab)})
    model = Decoder(cfg)
    model.load_state_dict(grow(ck["model"], ck["config"]["vocab"], len(vocab)))
    return model, vocab


def split(rows: list, seed: int, share: float = 0.1) -> tuple[list, list]:
    """Seeded hold-out of `share` of the rows (the same for every run with this seed and data)."""
    order = list(range(len(rows)))
    random.Random(f"tiny:judge-split:{seed}").shuffle(order)
    n = max(1, int(len(rows) * share))
    return [rows[i] for i in order[n:]], [rows[i] for i in order[:n]]


def agreement(model, vocab, rows, max_new: int = 48) -> dict:
    """Greedy verdicts against the rows' Monte Carlo labels (and how many had no verdict)."""
    gen = torch.Generator().manual_seed(0)
    outs = generate(model, [[vocab.bos] + vocab.encode(p) for p, _, _ in rows], max_new, 0.0, vocab.eos, gen)
    right = missing = 0
    for o, (_, _, label) in zip(outs, rows):
        text = vocab.decode(o)
        right += text.rstrip().endswith(f"\\boxed{{{label}}}")
        missing += "\\boxed{Positive}" not in text and "\\boxed{Negative}" not in text
    return {"mcAgreement": round(right / max(1, len(rows)), 4), "noVerdict": missing, "n": len(rows)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="stepwise export --task judge-rl --format trl output")
    ap.add_argument("--init", required=True, help="policy (or judge) checkpoint to start from")
    ap.add_argument("--out", required=True)
    ap.add_argument("--target", choices=["generative", "verdict"], default="generative")
    ap.add_argument("--analyses", help="generative: tiny.judge_analyses output for the same export")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-every", type=int, default=100)
    args = ap.parse_args()
    if args.target == "generative" and not args.analyses:
        raise SystemExit("--target generative needs --analyses (tiny.judge_analyses output)")
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    rows = load_rows(args.data, args.analyses if args.target == "generative" else None)
    train, valid = split(rows, args.seed)
    model, vocab = judge_model(args.init)
    encoded = [([vocab.bos] + vocab.encode(p), vocab.encode(t) + [vocab.eos]) for p, t, _ in train]

    def loss_at(step: int):
        x, m = pad([encoded[rng.randrange(len(encoded))] for _ in range(args.batch)])
        return sft_loss(model, x, m)

    meta = {"args": vars(args), "rows": len(rows), "train": len(train), "valid": len(valid),
            "positive": sum(r[2] == "Positive" for r in train)}
    run(model, loss_at, steps=args.steps, lr_at=cosine(args.lr, 50, args.steps), out=args.out, seed=args.seed,
        meta=meta, evaluate=lambda step: agreement(model, vocab, valid), eval_every=args.eval_every)


if __name__ == "__main__":
    main()
