"""The judge's analyses, written by a network: for each row of a judge RL export, the policy's
own greedy re-derivation of the new chunk from the same problem and previous chunks (stepwise's
policy prompt under --segmentation tags, the previous chunks as the prefix). Nothing here knows
the problem's answer or any step's truth: the analysis is what the policy would have written in
the chunk's place, right or wrong.

    PYTHONPATH=python:<gguf-py> python3 -m tiny.judge_analyses --data judge-rl.jsonl \
        --policy models/tiny/policy.gguf --out analyses.jsonl

Writes one {id, analysis} row per export row (analysis = the re-derived chunk's text).
"""

from __future__ import annotations

import argparse
import json
import os
import re

import torch

from .from_gguf import load
from .model import Config, Decoder, generate
from .vocab import HEADS, SOLUTION_MARK, policy_vocab

HISTORY_MARK = "\n\n## Previous reasoning steps\n"
CHUNK_MARK = "\n\n## New reasoning chunk\n"
TAG_RE = re.compile(r"<chunk>(.*?)</chunk>", re.DOTALL)


def sections(user: str) -> tuple[str, list[str], str]:
    """(question, previous chunks, new chunk) of a judge prompt (src/prompts/judge.ts)."""
    a = user.index("## Problem\n") + len("## Problem\n")
    h = user.index(HISTORY_MARK, a)
    c = user.index(CHUNK_MARK, h)
    question = user[a:h]
    history = TAG_RE.findall(user[h + len(HISTORY_MARK) : c])
    new = user[c + len(CHUNK_MARK) : user.rindex("\n\n## Task\n")]
    return question, history, new


def policy_prefix(question: str, history: list[str]) -> str:
    """stepwise's raw tags policy prompt with the previous chunks as the prefix, then `<chunk>`."""
    past = "".join(f"<chunk>{c}</chunk>\n" for c in history)
    return HEADS["tags"] + question + SOLUTION_MARK + past + "<chunk>"


def rederive(model, vocab, rows: list[dict], batch: int = 64) -> list[str]:
    prompts = []
    for r in rows:
        user = next(m["content"] for m in r["prompt"] if m["role"] == "user")
        question, history, _ = sections(user)
        prompts.append([vocab.bos] + vocab.encode(policy_prefix(question, history)))
    out: list[str] = []
    gen = torch.Generator().manual_seed(0)
    for i in range(0, len(prompts), batch):
        for ids in generate(model, prompts[i : i + batch], 48, 0.0, vocab.eos, gen):
            text = vocab.decode(ids)
            out.append(text.split("</chunk>")[0].strip())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="stepwise export --task judge-rl --format trl output")
    ap.add_argument("--policy", required=True, help="the policy's GGUF")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    ck = load(args.policy)
    model = Decoder(Config(**ck["config"]))
    model.load_state_dict(ck["model"])
    vocab = policy_vocab()
    rows = [json.loads(line) for line in open(args.data)]
    # Written beside the target and renamed over it: a killed run leaves no partial file that a
    # rerun would take as finished.
    with open(args.out + ".tmp", "w") as f:
        for r, a in zip(rows, rederive(model, vocab, rows)):
            f.write(json.dumps({"id": r["id"], "analysis": a}) + "\n")
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
