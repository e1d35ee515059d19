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
import json
import math
import os
import random
import time

import torch
import torch.nn.functional as F

from .model import Config, Decoder, generate
from .task import MODES, final_answer, problems, reserved_questions, solution_text, training_stream
from .vocab import HEADS, SOLUTION_MARK, policy_vocab


def prompt_ids(vocab, question: str, mode: str = "tags") -> list[int]:
    return [vocab.bos] + vocab.encode(HEADS[mode] + question + SOLUTION_MARK)


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
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.01)
    warm = 100

    def lr_at(step: int) -> float:
        if step < warm:
            return args.lr * (step + 1) / warm
        t = (step - warm) / max(1, args.steps - warm)
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))

    # A continued run draws its own problems (the seed namespace includes the start checkpoint).
    stream = training_stream(args.seed if not args.init else f"{args.seed}:continued", reserved_questions())
    held = problems("heldout", args.eval_count)
    modes = random.Random(f"tiny:modes:{args.seed}:{args.init or ''}")
    log = open(os.path.join(args.out, "log.jsonl"), "a")
    meta = {"config": cfg.to_dict(), "args": vars(args), "parameters": model.parameters_count()}
    log.write(json.dumps({"start": meta}) + "\n")
    log.flush()
    t0 = time.time()
    running = None
    for step in range(1, args.steps + 1):
        for g in opt.param_groups:
            g["lr"] = lr_at(step - 1)
        model.train()
        x, m = batch_tensors(vocab, [(next(stream), modes.choice(MODES)) for _ in range(args.batch)])
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
            acc0 = evaluate(model, vocab, held, 0.0, args.seed)
            acc1 = evaluate(model, vocab, held, 1.0, args.seed)
            para1 = evaluate(model, vocab, held, 1.0, args.seed, "paragraph")
            torch.save({"model": model.state_dict(), "config": cfg.to_dict(), "step": step,
                        "seconds": round(seconds, 1), "seed": args.seed},
                       os.path.join(args.out, f"ckpt-{step}.pt"))
            log.write(json.dumps({"step": step, "eval": {"t0": acc0, "t1": acc1, "n": len(held), "paragraphT1": para1},
                                  "seconds": round(seconds, 1)}) + "\n")
            log.flush()
            if args.stop_in and args.stop_in[0] <= acc1 <= args.stop_in[1]:
                break
        if args.stop_at and step >= args.stop_at:
            break


if __name__ == "__main__":
    main()
