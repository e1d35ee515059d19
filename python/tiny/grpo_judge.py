"""GRPO of the tiny judge, as StepWiser trains its judge: prompts from the judge RL export
(`stepwise export --task judge-rl`, balanced 50/50), 4 responses per prompt sampled at
temperature 1, reward 1 when the response's boxed verdict equals the row's Monte Carlo label
else 0, fetched over HTTP from `stepwise serve rewards --kind judge-agreement` by verl's reward
hook (`integrations/verl/stepwise_reward.py`, `compute_score`, called once per response as verl's
reward manager calls it). Advantages are the rewards normalised within each prompt's group;
groups whose 4 rewards are equal carry no signal and are left out. The loss is the token-level
clipped surrogate with clip-higher (ε_low 0.2, ε_high 0.28), no KL term; each rollout batch is
used for `--minibatches` optimizer steps, so later steps are off-policy and the clip acts.
No exact truth is read: the only label is the export's.

    STEPWISE_REWARD_URL=http://127.0.0.1:PORT python3 -m tiny.grpo_judge --data judge-rl.jsonl \
        --init SFT_CKPT.pt --out DIR [--steps 60] [--prompts 16]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random

import torch

from .model import generate
from .train_judge import agreement, judge_model, load_rows, split
from .trainer import pad, run, token_logprobs

HOOK = os.path.join(os.path.dirname(__file__), "..", "..", "integrations", "verl", "stepwise_reward.py")


def verl_reward_hook():
    """The project's verl reward function, imported from its file as verl imports it."""
    spec = importlib.util.spec_from_file_location("stepwise_reward", HOOK)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.compute_score


def group_advantages(rewards: list[float], group: int) -> list[float]:
    """GRPO: (r − mean) / (std + 1e-6) within each prompt's group of responses."""
    out = []
    for g in range(0, len(rewards), group):
        rs = torch.tensor(rewards[g : g + group])
        out += ((rs - rs.mean()) / (rs.std(unbiased=False) + 1e-6)).tolist()
    return out


def clipped_loss(new_lp, old_lp, adv, mask, eps_low: float, eps_high: float):
    """Token-level clipped surrogate (DAPO's clip-higher: the ratio may rise to 1 + ε_high)."""
    ratio = torch.exp(new_lp - old_lp)
    a = adv[:, None]
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * a)
    clipped = ((ratio < 1 - eps_low) | (ratio > 1 + eps_high)).float()
    n = mask.sum().clamp(min=1)
    return -(surrogate * mask).sum() / n, float((clipped * mask).sum() / n)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="stepwise export --task judge-rl --format trl output (balanced)")
    ap.add_argument("--init", required=True, help="the SFT judge's checkpoint")
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=120, help="optimizer steps")
    ap.add_argument("--prompts", type=int, default=16, help="prompts per rollout batch")
    ap.add_argument("--group", type=int, default=4, help="responses per prompt (StepWiser: 4)")
    ap.add_argument("--minibatches", type=int, default=2, help="optimizer steps per rollout batch")
    ap.add_argument("--eps-low", type=float, default=0.2)
    ap.add_argument("--eps-high", type=float, default=0.28)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--max-new", type=int, default=48)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-every", type=int, default=40)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    compute_score = verl_reward_hook()
    # The export's rows as prompts; the targets load_rows would build are not used here.
    rows = load_rows(args.data, None)
    train, valid = split(rows, args.seed)
    model, vocab = judge_model(args.init)
    queue: list[tuple] = []
    stats = {"reward": 0.0, "formatOk": 0.0, "groupsWithSignal": 0.0}

    def rollout_batch() -> list[tuple]:
        """Sample responses, ask the reward server, and cut the batch into mini-batches."""
        picked = [train[rng.randrange(len(train))] for _ in range(args.prompts)]
        prompts = [[vocab.bos] + vocab.encode(p) for p, _, _ in picked for _ in range(args.group)]
        outs = generate(model, prompts, args.max_new, args.temperature, vocab.eos, gen)
        rewards, fmt = [], []
        for k, o in enumerate(outs):
            label = picked[k // args.group][2]
            got = compute_score("stepwise/judge-rl", vocab.decode(o), label, {})
            rewards.append(float(got["score"]))
            fmt.append(float(got.get("format_ok", 0)))
        adv = group_advantages(rewards, args.group)
        keep = [k for k in range(len(outs)) if any(
            rewards[j] != rewards[k] for j in range(k - k % args.group, k - k % args.group + args.group))]
        stats["reward"] = sum(rewards) / len(rewards)
        stats["formatOk"] = sum(fmt) / len(fmt)
        stats["groupsWithSignal"] = len(keep) / len(outs)
        items = [(prompts[k], outs[k] + [vocab.eos], adv[k]) for k in keep]
        if not items:
            return [None] * args.minibatches
        x, m = pad([(p, t) for p, t, _ in items])
        with torch.no_grad():
            old = token_logprobs(model, x)
        a = torch.tensor([it[2] for it in items])
        order = list(range(len(items)))
        rng.shuffle(order)
        size = -(-len(items) // args.minibatches)
        return [(x[idx], m[idx], old[idx], a[idx]) for idx in
                (torch.tensor(order[i : i + size]) for i in range(0, len(order), size))] + \
            [None] * (args.minibatches - -(-len(items) // size))

    def loss_at(step: int):
        nonlocal queue
        if not queue:
            queue = rollout_batch()
        mb = queue.pop(0)
        if mb is None:
            return torch.zeros((), requires_grad=True), dict(stats, clipFraction=0.0)
        x, m, old, a = mb
        loss, clip = clipped_loss(token_logprobs(model, x), old, a, m[:, 1:], args.eps_low, args.eps_high)
        return loss, dict(stats, clipFraction=clip)

    meta = {"args": vars(args), "rows": len(rows), "train": len(train), "valid": len(valid),
            "reward": "stepwise serve rewards --kind judge-agreement via integrations/verl/stepwise_reward.py",
            "rewardUrl": os.environ.get("STEPWISE_REWARD_URL", "http://127.0.0.1:8765")}
    run(model, loss_at, steps=args.steps, lr_at=lambda step: args.lr, out=args.out, seed=args.seed, meta=meta,
        evaluate=lambda step: agreement(model, vocab, valid), eval_every=args.eval_every, log_every=10,
        weight_decay=0.0)


if __name__ == "__main__":
    main()
