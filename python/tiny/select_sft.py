"""Rejection-sampling fine-tuning of the tiny policy on one pick of `stepwise select` (the data
selection ablation, docs/tiny.md): `--pick chosen` trains on the judge's pick (the correct
response with the highest mean chunk score, StepWiser's rule), `--pick outcomeOnly` on the
outcome-only pick (a correct response drawn at random), one response per problem either way.

The inputs are what a user has: the policy's own samples, their final answers checked against
the problem's answer by `stepwise sample`, and the committed judge's scores. Nothing here reads
the task's exact truth. The prompt is stepwise's raw tags policy prompt, as vocab.prompt_ids
builds it for train_policy.py too (instruction + question + SOLUTION_MARK); the loss is on the
response and the end token (trainer.sft_loss). Steps, learning rate, batch and seed are the caller's and are the same
for both picks; the checkpoint kept is the last one (fixed before training).

    python3 -m tiny.select_sft --selected selected.jsonl --pick chosen --init POLICY.pt --out DIR \
        [--steps 150] [--lr 1e-3] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import random

import torch

from .model import Config, Decoder
from .trainer import cosine, pad, run, sft_loss
from .vocab import policy_vocab, prompt_ids

PICKS = ("chosen", "outcomeOnly")


def load_pairs(path: str, pick: str) -> list[tuple[str, str]]:
    """(question, response) for every problem whose row has the pick (problems with no correct
    response have none under either pick, so both sets cover the same problems)."""
    pairs = []
    for n, line in enumerate(open(path), start=1):
        row = json.loads(line)
        if pick not in row:
            raise SystemExit(f"{path}:{n}: no field {pick!r} (not a `stepwise select` output row)")
        got = row[pick]
        if got is None:
            continue
        if not isinstance(got.get("text"), str) or not isinstance(row.get("question"), str):
            raise SystemExit(f"{path}:{n}: {pick}.text and question must be strings")
        pairs.append((row["question"], got["text"]))
    if not pairs:
        raise SystemExit(f"{path}: no row has a {pick} response")
    return pairs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--selected", required=True, help="stepwise select output")
    ap.add_argument("--pick", choices=PICKS, required=True)
    ap.add_argument("--init", required=True, help="the policy's checkpoint (tiny.from_gguf of policy.gguf)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    # The batch order depends on the seed only, so both picks see their rows in the same order.
    rng = random.Random(f"tiny:select-sft:{args.seed}")
    vocab = policy_vocab()
    ck = torch.load(args.init, map_location="cpu")
    model = Decoder(Config(**ck["config"]))
    model.load_state_dict(ck["model"])
    pairs = load_pairs(args.selected, args.pick)
    encoded = [(prompt_ids(vocab, q, "tags"), vocab.encode(t) + [vocab.eos]) for q, t in pairs]

    def loss_at(step: int):
        x, m = pad([encoded[rng.randrange(len(encoded))] for _ in range(args.batch)])
        return sft_loss(model, x, m)

    meta = {"args": vars(args), "rows": len(pairs), "distinctResponses": len({t for _, t in pairs})}
    run(model, loss_at, steps=args.steps, lr_at=cosine(args.lr, args.warmup, args.steps), out=args.out,
        seed=args.seed, meta=meta, evaluate=lambda step: {"rows": len(pairs)}, eval_every=0)


if __name__ == "__main__":
    main()
