"""SFT of the tiny policy on correct solutions, prompted exactly as stepwise's raw policy
prompt renders them (src/prompts/policy.ts): instruction + question + SOLUTION_MARK + solution.
Each training problem is drawn in one of the two segmentations at random (seeded): the
paragraph instruction with one operation per blank-line paragraph, or the tags instruction with
`<chunk>`s that group an operation run of one family (task.chunk_groups), so the policy follows
the segmentation its prompt asks for.

    python3 -m tiny.train_policy --out build/tiny/policy [--steps 4000] [--seed 1]

Writes log.jsonl (loss every 25 steps; held-out accuracy at temperature 0 and 1 every
--eval-every steps) and ckpt-<step>.pt. Loss is on the solution tokens and the end token only.
"""

from __future__ import annotations

import argparse
import math
import os
import random

import torch

from .model import Config, Decoder, generate
from .task import MODES, final_answer, problems, reserved_questions, solution_text, training_stream
from .trainer import run, sft_loss
from .vocab import policy_vocab, prompt_ids


def batch_tensors(vocab, items):
    """items: (problem, mode) pairs."""
    seqs, masks = [], []
    for p, mode in items:
        pr = prompt_ids(vocab, p.question, mode)
        sol = vocab.encode(solution_text(p, mode)) + [vocab.eos]
        seqs.append(pr + sol)
        masks.append([0] * len(pr) + [1] * len(sol))
    T = max(len(s) for s in seqs)
    x = torch.zeros(len(seqs), T, dtype=torch.long)
    m = torch.zeros(len(seqs), T)
    for i, (s, k) in enumerate(zip(seqs, masks)):
        x[i, : len(s)] = torch.tensor(s)
        m[i, : len(k)] = torch.tensor(k, dtype=torch.float)
    return x, m


def evaluate(model, vocab, items, temperature: float, seed: int, mode: str = "tags") -> float:
    gen = torch.Generator().manual_seed(seed)
    outs = generate(model, [prompt_ids(vocab, p.question, mode) for p in items], 96, temperature, vocab.eos, gen)
    right = sum(final_answer(vocab.decode(o)) == p.answer for o, p in zip(outs, items))
    return right / len(items)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=384)
    ap.add_argument("--eval-every", type=int, default=500)
    ap.add_argument("--eval-count", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--init", help="start from this checkpoint's weights (e.g. a judge base: the policy trained further)")
    ap.add_argument("--stop-at", type=int, help="stop after this step (the schedule still spans --steps)")
    ap.add_argument("--stop-in", type=float, nargs=2, metavar=("LOW", "HIGH"),
                    help="stop at the first evaluation whose temperature-1 accuracy (tags) is in [LOW, HIGH]")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    vocab = policy_vocab()
    cfg = Config(vocab=len(vocab), dim=args.dim, layers=args.layers, heads=args.heads, ffn=args.ffn)
    model = Decoder(cfg)
    if args.init:
        model.load_state_dict(torch.load(args.init, map_location="cpu")["model"])
    warm = 100

    def lr_at(step: int) -> float:
        # Step s uses the rate of s − 1 in a warm-up of `warm` steps, then cosine decay to 10%.
        s = step - 1
        if s < warm:
            return args.lr * (s + 1) / warm
        t = (s - warm) / max(1, args.steps - warm)
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))

    # A continued run draws its own problems (the seed namespace includes the start checkpoint).
    stream = training_stream(args.seed if not args.init else f"{args.seed}:continued", reserved_questions())
    held = problems("heldout", args.eval_count)
    modes = random.Random(f"tiny:modes:{args.seed}:{args.init or ''}")

    def loss_at(step: int):
        x, m = batch_tensors(vocab, [(next(stream), modes.choice(MODES)) for _ in range(args.batch)])
        return sft_loss(model, x, m)

    def evaluate_at(step: int) -> dict:
        return {"t0": evaluate(model, vocab, held, 0.0, args.seed), "t1": evaluate(model, vocab, held, 1.0, args.seed),
                "n": len(held), "paragraphT1": evaluate(model, vocab, held, 1.0, args.seed, "paragraph")}

    run(model, loss_at, steps=min(args.steps, args.stop_at or args.steps), lr_at=lr_at, out=args.out,
        seed=args.seed, meta={"args": vars(args)}, evaluate=evaluate_at, eval_every=args.eval_every,
        stop=(lambda step, e: args.stop_in[0] <= e["t1"] <= args.stop_in[1]) if args.stop_in else None)


if __name__ == "__main__":
    main()
