"""Install a finished tiny judge (python/tiny/judge_run.sh output) as models/tiny/judge.gguf and
write its card entry: what it was trained on, each stage's settings and logs, and its
ProcessBench score on exact first errors (the only place exact truth enters, after training).

    python3 -m tiny.build_judge RUN_DIR models/tiny --data build/tiny/judge-data-m16
"""

from __future__ import annotations

import argparse
import json
import os
import shutil

from .export_gguf import sha256


def log_of(path: str) -> tuple[dict, list[dict], list[dict]]:
    start, steps, evals = {}, [], []
    for line in open(os.path.join(path, "log.jsonl")):
        row = json.loads(line)
        if "start" in row:
            start, steps, evals = row["start"], [], []  # a rerun's log starts over
        elif "eval" in row:
            evals.append(row)
        else:
            steps.append(row)
    return start, steps, evals


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("models")
    ap.add_argument("--data", required=True, help="python/tiny/judge_data.sh output folder")
    args = ap.parse_args()
    sft, sft_steps, sft_evals = log_of(os.path.join(args.run, "sft"))
    rl, rl_steps, rl_evals = log_of(os.path.join(args.run, "rl"))
    labels = json.load(open(os.path.join(args.data, "label-summary.json")))
    signal = sft["args"]["data"].rsplit("judge-rl-", 1)[1].removesuffix(".jsonl")
    export = json.load(open(os.path.join(args.data, f"export-{signal}.json")))
    differ = json.load(open(os.path.join(args.data, "signals.json")))
    out = os.path.join(args.models, "judge.gguf")
    shutil.copyfile(os.path.join(args.run, "judge.gguf"), out + ".tmp")
    os.replace(out + ".tmp", out)
    pb = json.load(open(os.path.join(args.run, "pb-judge.json")))
    # The scored set beside the model, so the card's score reproduces from committed files alone.
    shutil.copyfile("build/tiny/loop/pb.jsonl",
                    os.path.join(args.models, "processbench-heldout.jsonl"))
    card_path = os.path.join(args.models, "card.json")
    card = json.load(open(card_path))
    entry = {
        "file": "judge.gguf",
        "sha256": sha256(out),
        "bytes": os.path.getsize(out),
        "parameters": sft["parameters"],
        "trainingSteps": sft["steps"] + rl["steps"],
        "seconds": round(sft_evals[-1]["seconds"] + rl_evals[-1]["seconds"], 1),
        "seed": sft["seed"],
        "initializedFrom": "the policy's weights (models/tiny/policy.gguf, read back by tiny.from_gguf), vocabulary "
                           "extended by the judge prompt's phrases",
        "trainedOn": "Monte Carlo labels only: no training target, filter, checkpoint or recipe choice saw exact "
                     "truth (test/tiny/lineage.test.ts)",
        "trainingData": {
            "labels": f"stepwise label --rollouts {labels['config']['rollouts']} --signals "
                      f"{','.join(labels['config']['signals'])} on {labels['solutions']} policy samples of "
                      "training problems (split train 0-1999, --segmentation tags)",
            "chunks": labels["chunks"],
            "rollouts": labels["rollouts"],
            "signalsDiffer": differ["chunksDiffering"],
            "export": f"stepwise export --task judge-rl --format trl --signal {signal} --seed 0 (balanced 50/50)",
            "exportRows": export.get("rows", export.get("written")),
            "verdicts": f"each row's Monte Carlo ({signal}) label",
            "analyses": "the policy's own greedy re-derivation of the chunk from the same problem and previous "
                        "chunks (tiny.judge_analyses), right or wrong; no row filtered",
            "heldOut": f"{sft['valid']} rows (10%, seeded) for the logged Monte Carlo agreement",
        },
        "stages": [
            {"stage": "SFT", "steps": sft["steps"], "seconds": sft_evals[-1]["seconds"], "lr": sft["args"]["lr"],
             "batch": sft["args"]["batch"], "target": sft["args"]["target"],
             "validation": [{"step": e["step"], **e["eval"]} for e in sft_evals]},
            {"stage": "RL (GRPO)", "steps": rl["steps"], "seconds": rl_evals[-1]["seconds"], "lr": rl["args"]["lr"],
             "promptsPerBatch": rl["args"]["prompts"], "responsesPerPrompt": rl["args"]["group"],
             "minibatches": rl["args"]["minibatches"], "clip": [rl["args"]["eps_low"], rl["args"]["eps_high"]],
             "temperature": rl["args"]["temperature"], "kl": "none",
             "reward": "1 when the boxed verdict equals the Monte Carlo label, else 0: `stepwise serve rewards "
                       "--kind judge-agreement` over HTTP, asked by integrations/verl/stepwise_reward.py compute_score",
             "meanReward": {"first": rl_steps[0].get("reward") if rl_steps else None,
                            "last": rl_steps[-1].get("reward") if rl_steps else None},
             "validation": [{"step": e["step"], **e["eval"]} for e in rl_evals]},
        ],
        "checkpointChoice": "the last step of each stage, fixed before training (no checkpoint was chosen by a score)",
        "rl": "done",
        "config": sft["config"],
        "processbench": {
            "rows": pb["samples"],
            "file": "processbench-heldout.jsonl",
            "set": "ProcessBench split problems 0-299, one temperature-1 policy sample each under --segmentation "
                   "tags, exact first errors (77 with an error): build/tiny/loop/pb.jsonl of `npm run tiny:loop`, "
                   "committed as models/tiny/processbench-heldout.jsonl",
            "command": "stepwise eval processbench --judge generative:gguf:models/tiny/judge.gguf "
                       "--path models/tiny/processbench-heldout.jsonl --segmentation tags --out processbench-report.json",
            "error_acc": round(pb["subsets"]["pb"]["error_acc"], 2),
            "correct_acc": round(pb["subsets"]["pb"]["correct_acc"], 2),
            "f1": round(pb["subsets"]["pb"]["f1"], 2),
            "formatFailures": pb["formatFailures"],
        },
    }
    card["judge"] = entry
    with open(card_path, "w") as f:
        json.dump(card, f, indent=2)
        f.write("\n")
    print(json.dumps(entry, indent=2))


if __name__ == "__main__":
    main()
