"""The one training loop of the tiny world: the policy's SFT, the judge's SFT and the judge's
GRPO all run through `run` (AdamW, warm-up then cosine decay, gradient clipping at 1, a JSON log,
seeded). Each caller supplies only its loss for a step.

`sft_loss` is the masked next-token loss both SFTs use (loss on target tokens only);
`token_logprobs` gives the per-token log-probabilities GRPO's ratio needs.
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Callable

import torch
import torch.nn.functional as F


def cosine(lr: float, warm: int, steps: int, floor: float = 0.1) -> Callable[[int], float]:
    """Linear warm-up over `warm` steps, then cosine decay to `floor`·lr at `steps`."""

    def at(step: int) -> float:
        if step <= warm:
            return lr * step / max(1, warm)
        t = (step - warm) / max(1, steps - warm)
        return lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * t)))

    return at


def pad(pairs: list[tuple[list[int], list[int]]]) -> tuple[torch.Tensor, torch.Tensor]:
    """(prompt ids, target ids) pairs → token matrix and a mask that is 1 on target tokens."""
    T = max(len(p) + len(t) for p, t in pairs)
    x = torch.zeros(len(pairs), T, dtype=torch.long)
    m = torch.zeros(len(pairs), T)
    for i, (p, t) in enumerate(pairs):
        x[i, : len(p) + len(t)] = torch.tensor(p + t)
        m[i, len(p) : len(p) + len(t)] = 1
    return x, m


def token_logprobs(model, x: torch.Tensor) -> torch.Tensor:
    """log π(x[:, t] | x[:, <t]) for t ≥ 1: shape (B, T − 1)."""
    logits = model(x[:, :-1])
    return -F.cross_entropy(logits.transpose(1, 2), x[:, 1:], reduction="none")


def sft_loss(model, x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    """Mean negative log-likelihood of the target tokens (m = 1), the others ignored."""
    nll = -token_logprobs(model, x)
    mask = m[:, 1:]
    return (nll * mask).sum() / mask.sum()


def run(model, loss_at: Callable[[int], tuple[torch.Tensor, dict] | torch.Tensor], *, steps: int,
        lr_at: Callable[[int], float], out: str, seed: int, meta: dict,
        evaluate: Callable[[int], dict] | None = None, eval_every: int = 0, log_every: int = 25,
        stop: Callable[[int, dict], bool] | None = None, weight_decay: float = 0.01) -> None:
    """Train `model` for `steps` optimizer steps. `loss_at(step)` returns the step's loss (and
    optionally numbers to log). Every `eval_every` steps and at the end, `evaluate(step)` is
    logged and a checkpoint `ckpt-<step>.pt` is written; `stop(step, evaluation)` may end the run.
    Several optimizer steps on one batch (GRPO's mini-batches) are the caller's `loss_at` calls."""
    os.makedirs(out, exist_ok=True)
    opt = torch.optim.AdamW(model.parameters(), lr=lr_at(1), betas=(0.9, 0.95), weight_decay=weight_decay)
    log = open(os.path.join(out, "log.jsonl"), "a")
    log.write(json.dumps({"start": {**meta, "config": model.cfg.to_dict(), "parameters": model.parameters_count(),
                                    "seed": seed, "steps": steps}}) + "\n")
    log.flush()
    t0 = time.time()
    running = None
    extras: dict[str, float] = {}
    for step in range(1, steps + 1):
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        model.train()
        got = loss_at(step)
        loss, info = got if isinstance(got, tuple) else (got, {})
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
        for k, v in info.items():
            extras[k] = v if k not in extras else 0.9 * extras[k] + 0.1 * v
        if step % log_every == 0:
            log.write(json.dumps({"step": step, "loss": round(running, 4), "seconds": round(time.time() - t0, 1),
                                  **{k: round(v, 4) for k, v in extras.items()}}) + "\n")
            log.flush()
        if evaluate and ((eval_every and step % eval_every == 0) or step == steps):
            seconds = time.time() - t0
            result = evaluate(step)
            torch.save({"model": model.state_dict(), "config": model.cfg.to_dict(), "step": step,
                        "seconds": round(seconds, 1), "seed": seed}, os.path.join(out, f"ckpt-{step}.pt"))
            log.write(json.dumps({"step": step, "eval": result, "seconds": round(seconds, 1)}) + "\n")
            log.flush()
            if stop and stop(step, result):
                break
