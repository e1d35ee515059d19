"""Pick the judge checkpoint, export it to GGUF and write its card entry.

    PYTHONPATH=python:<gguf-py> python3 -m tiny.build_judge RUN_DIR models/tiny

The checkpoint is the one with the best verdict accuracy on the validation rows (10% of the
judge RL export, held out from its training; the earliest on ties).
"""

from __future__ import annotations

import argparse
import json
import os

import torch

from .build_policy import sha256
from .export_gguf import export
from .model import Config, Decoder


def base_eval(ckpt_path: str) -> dict:
    """The judge base: a checkpoint of the policy's run, with its held-out evaluation."""
    ck = torch.load(ckpt_path, map_location="cpu")
    held = None
    with open(os.path.join(os.path.dirname(ckpt_path), "log.jsonl")) as f:
        for line in f:
            row = json.loads(line)
            if "eval" in row and row.get("step") == ck["step"]:
                held = row["eval"]
    return {"trainingSteps": ck["step"], "seconds": ck["seconds"], "heldoutAccuracy": held}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("models")
    ap.add_argument("--base", help="the judge base's checkpoint (its step and held-out evaluation go in the card)")
    args = ap.parse_args()
    start, evals = None, []
    with open(os.path.join(args.run, "log.jsonl")) as f:
        for line in f:
            row = json.loads(line)
            if "start" in row:
                start = row["start"]
            elif "eval" in row:
                evals.append(row)
    if not evals:
        raise SystemExit(f"{args.run}: no evaluated checkpoint yet")
    best = max(evals, key=lambda r: (r["eval"]["validVerdictAccuracy"], -r["step"]))
    ckpt_path = os.path.join(args.run, f"ckpt-{best['step']}.pt")
    ck = torch.load(ckpt_path, map_location="cpu")
    model = Decoder(Config(**ck["config"]))
    out = os.path.join(args.models, "judge.gguf")
    export(ckpt_path, out, "judge")
    card_path = os.path.join(args.models, "card.json")
    card = json.load(open(card_path)) if os.path.exists(card_path) else {}
    entry = card.get("judge", {})
    entry.update({
        "file": "judge.gguf",
        "sha256": sha256(out),
        "bytes": os.path.getsize(out),
        "parameters": model.parameters_count(),
        "trainingSteps": best["step"],
        "seconds": ck["seconds"],
        "seed": ck["seed"],
        "initializedFrom": "the judge base: a later checkpoint of the policy's own training run (the policy "
                           "trained further on the same task, python/tiny/train_judge.sh), vocabulary extended "
                           "by the judge prompt's phrases",
        "base": base_eval(args.base) if args.base else None,
        "trainingRows": start["train"] if start else None,
        "data": {k: start[k] for k in ("rows", "counts") if start and k in start},
        "options": {k: start["args"].get(k) for k in ("consistent_only", "balance", "steps", "lr", "batch")}
        if start else None,
        "validation": {"rows": best["eval"]["n"], "verdictAccuracy": best["eval"]["validVerdictAccuracy"],
                       "against": "the Monte Carlo (rel-effective) labels of held-out export rows"},
        "config": ck["config"],
    })
    card["judge"] = entry
    with open(card_path, "w") as f:
        json.dump(card, f, indent=2)
        f.write("\n")
    print(json.dumps(entry, indent=2))


if __name__ == "__main__":
    main()
