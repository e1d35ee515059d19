"""How correlated the tiny policy's attempts at one chunk are (the statistic the simulated world's
`misconception` and `recur` knobs stand for, docs/sim.md "Fitted to the tiny world"). Exact
truth scores the attempts; nothing here trains anything.

    PYTHONPATH=python:<gguf-py> python3 -m tiny.attempts --policy models/tiny/policy.gguf \
        [--offset 2000 --count 300 --attempts 4]

For validation problems (split train from --offset: never in the judge's data), one
temperature-1 tags solution each; at every chunk whose earlier chunks are right, --attempts fresh
temperature-1 attempts at that chunk from the same prefix (what chunk-reset does). JSON out: the
attempts' error rate, P(another attempt wrong | one wrong), P(the same text | both wrong), and the
error rate by the number of operations the chunk should hold.
"""

from __future__ import annotations

import argparse
import itertools
import json

import torch

from .from_gguf import load
from .judge_analyses import policy_prefix
from .model import Config, Decoder, generate
from .task import first_error, problems, split_chunks
from .vocab import HEADS, SOLUTION_MARK, policy_vocab


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--policy", required=True)
    ap.add_argument("--offset", type=int, default=2000)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--attempts", type=int, default=4)
    args = ap.parse_args()
    torch.set_num_threads(1)
    ck = load(args.policy)
    model = Decoder(Config(**ck["config"]))
    model.load_state_dict(ck["model"])
    vocab = policy_vocab()
    gen = torch.Generator().manual_seed(0)
    probs = problems("train", args.offset + args.count)[args.offset :]
    firsts = generate(model, [[vocab.bos] + vocab.encode(HEADS["tags"] + p.question + SOLUTION_MARK) for p in probs],
                      96, 1.0, vocab.eos, gen)
    sites = []  # (problem, prefix chunks)
    for p, ids in zip(probs, firsts):
        chunks = [c.removeprefix("<chunk>").removesuffix("</chunk>") for c in split_chunks(vocab.decode(ids))]
        for i in range(len(chunks)):
            fe = first_error(p, [f"<chunk>{c}</chunk>" for c in chunks[:i]]) if i else -2
            if i and fe != i:  # an earlier chunk is wrong (or the solution ended)
                break
            sites.append((p, chunks[:i]))
    prompts = [[vocab.bos] + vocab.encode(policy_prefix(p.question, prefix)) for p, prefix in sites
               for _ in range(args.attempts)]
    outs = generate(model, prompts, 48, 1.0, vocab.eos, gen)
    wrong_n = total = pair_n = pair_both = same_n = 0
    by_len: dict[int, list[int]] = {}
    for s, (p, prefix) in enumerate(sites):
        texts, wrong = [], []
        for a in range(args.attempts):
            text = vocab.decode(outs[s * args.attempts + a]).split("</chunk>")[0].strip()
            chunks = [f"<chunk>{c}</chunk>" for c in [*prefix, text]]
            fe = first_error(p, chunks)
            texts.append(text)
            wrong.append(fe == len(prefix))
        total += len(wrong)
        wrong_n += sum(wrong)
        ops = max(1, len([x for x in texts[0].split("\n") if x.strip()]))
        by_len.setdefault(ops, [0, 0])
        by_len[ops][0] += sum(wrong)
        by_len[ops][1] += len(wrong)
        for a, b in itertools.permutations(range(args.attempts), 2):
            if wrong[a]:
                pair_n += 1
                pair_both += wrong[b]
                same_n += wrong[b] and texts[a] == texts[b]
    print(json.dumps({
        "world": "tiny", "problems": len(probs), "sites": len(sites), "attempts": total,
        "errorRate": round(wrong_n / total, 4),
        "pWrongGivenOtherWrong": round(pair_both / max(1, pair_n), 4),
        "pSameTextGivenBothWrong": round(same_n / max(1, pair_both), 4),
        "errorRateByOps": {k: {"rate": round(v[0] / v[1], 4), "attempts": v[1]} for k, v in sorted(by_len.items())},
    }, indent=2))


if __name__ == "__main__":
    main()
