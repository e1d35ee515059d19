"""Pick the policy checkpoint, export it to GGUF and write its card entry.

    PYTHONPATH=python:<gguf-py> python3 -m tiny.build_policy RUN_DIR models/tiny

The checkpoint is the first one (in training order) whose temperature-1 accuracy (tags prompt) on the
held-out problems evaluated during training (the first --eval-count of split heldout, at most
200) lies in [0.45, 0.75] (else the last one): the policy must err often enough for its
rollouts to have errors to find. Its card accuracies are then measured afresh on held-out
problems 200–1199, which the choice never saw.
"""

from __future__ import annotations

import argparse
import json
import os

import torch

from .export_gguf import export, sha256
from .model import Config, Decoder
from .task import problems
from .train_policy import evaluate
from .vocab import policy_vocab

LOW, HIGH = 0.45, 0.75


def choose(run: str) -> tuple[int, dict]:
    evals = []
    with open(os.path.join(run, "log.jsonl")) as f:
        for line in f:
            row = json.loads(line)
            if "eval" in row:
                evals.append(row)
    if not evals:
        raise SystemExit(f"{run}: no evaluated checkpoint yet")
    for row in evals:
        if LOW <= row["eval"]["t1"] <= HIGH:
            return row["step"], row
    return evals[-1]["step"], evals[-1]


def evaluation(run: str, step: int) -> dict:
    with open(os.path.join(run, "log.jsonl")) as f:
        for line in f:
            row = json.loads(line)
            if "eval" in row and row.get("step") == step:
                return row
    return {}


def batch_size(run: str) -> int:
    with open(os.path.join(run, "log.jsonl")) as f:
        return json.loads(f.readline())["start"]["args"]["batch"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("models")
    ap.add_argument("--step", type=int, help="use this checkpoint instead of the rule above")
    ap.add_argument("--eval-count", type=int, default=1000)
    args = ap.parse_args()
    torch.set_num_threads(2)
    step, row = (args.step, evaluation(args.run, args.step)) if args.step else choose(args.run)
    ckpt_path = os.path.join(args.run, f"ckpt-{step}.pt")
    ck = torch.load(ckpt_path, map_location="cpu")
    model = Decoder(Config(**ck["config"]))
    model.load_state_dict(ck["model"])
    vocab = policy_vocab()
    batch = batch_size(args.run)
    held = problems("heldout", 200 + args.eval_count)[200:]
    acc0 = evaluate(model, vocab, held, 0.0, ck["seed"], "tags")
    acc1 = evaluate(model, vocab, held, 1.0, ck["seed"], "tags")
    para0 = evaluate(model, vocab, held, 0.0, ck["seed"], "paragraph")
    para1 = evaluate(model, vocab, held, 1.0, ck["seed"], "paragraph")
    os.makedirs(args.models, exist_ok=True)
    out = os.path.join(args.models, "policy.gguf")
    export(ckpt_path, out, "policy")
    card_path = os.path.join(args.models, "card.json")
    card = json.load(open(card_path)) if os.path.exists(card_path) else {}
    card["world"] = "tiny"
    card["policy"] = {
        "file": "policy.gguf",
        "sha256": sha256(out),
        "bytes": os.path.getsize(out),
        "parameters": model.parameters_count(),
        "trainingSteps": step,
        "seconds": ck["seconds"],
        "seed": ck["seed"],
        "trainedOn": "exact solutions: SFT on correct solutions written by code from each problem (tiny.task "
                     f"solution_text), {step * batch:,} random problem draws ({step} steps of batch {batch}), each in one segmentation at random; questions of the held-out and "
                     "ProcessBench splits (the first 2,000 of each) excluded. Exact truth is legitimate for the "
                     "policy's SFT; only the judge must never see it",
        "accuracy": {"t0": acc0, "t1": acc1},
        "accuracyProblems": len(held),
        "accuracyOn": "held-out problems 200-1199 of split heldout (seed 0), final answer in \\boxed{}, "
                      "prompted with stepwise's --segmentation tags instruction",
        "accuracyParagraph": {"t0": para0, "t1": para1},
        "segmentations": ["tags", "paragraph"],
        "config": ck["config"],
        "trainingLog": {"selectedBy": f"checkpoint {step} (--step)" if args.step else
                        f"first checkpoint with held-out t1 accuracy in [{LOW}, {HIGH}]",
                        "evalAtSelection": row.get("eval")},
    }
    with open(card_path, "w") as f:
        json.dump(card, f, indent=2)
        f.write("\n")
    print(json.dumps(card["policy"], indent=2))


if __name__ == "__main__":
    main()
