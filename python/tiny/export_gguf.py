"""Write a trained checkpoint as a GGUF file of llama.cpp's `llama` architecture (F32).

    PYTHONPATH=python:/path/to/llama.cpp/gguf-py python3 -m tiny.export_gguf CKPT OUT.gguf --kind policy

gguf-py comes from the llama.cpp source node-llama-cpp ships (see docs/tiny.md); it is not
vendored here. The chat template stored in the file renders stepwise's chat-form policy
messages to the very text of its raw-form prompt, so both forms reach the same tokens.
"""

from __future__ import annotations

import argparse
import hashlib

import numpy as np
import torch

from .model import Config
from .vocab import BYTE, UNUSED, judge_vocab, policy_vocab

# stepwise's chat form is [user: instruction + "\n\nProblem: " + question, (assistant: prefix)];
# its raw form is the same user text + "\n\nSolution:\n" + prefix. Render the former as the latter.
POLICY_CHAT_TEMPLATE = (
    "{%- for m in messages -%}"
    "{%- if m['role'] == 'user' -%}{{ m['content'] + '\\n\\nSolution:\\n' }}"
    "{%- elif m['role'] == 'assistant' -%}{{ m['content'] }}"
    "{%- endif -%}"
    "{%- endfor -%}"
)


# The gguf backend sends a judge's messages flattened (src/models/gguf.ts flattenMessages:
# "role: content\n\n" per message, then "assistant: "); the chat form renders the same text.
JUDGE_CHAT_TEMPLATE = (
    "{%- for m in messages -%}{{ m['role'] + ': ' + m['content'] + '\\n\\n' }}{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ 'assistant: ' }}{%- endif -%}"
)


def sha256(path: str) -> str:
    """The file's sha256 (what card.json records for each model file)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def export(ckpt_path: str, out: str, kind: str, chat_template: str | None = None) -> None:
    import os

    import gguf  # from llama.cpp's gguf-py

    # Written beside the target, then renamed over it: a process that has the old file mapped
    # (llama.cpp mmaps models) keeps reading the old bytes instead of faulting on a truncated file.
    final, out = out, out + ".tmp"
    ck = torch.load(ckpt_path, map_location="cpu")
    cfg = Config(**ck["config"])
    sd = ck["model"]
    vocab = policy_vocab() if kind == "policy" else judge_vocab()
    assert len(vocab) == cfg.vocab, "checkpoint and vocabulary disagree"
    w = gguf.GGUFWriter(out, "llama")
    w.add_name(f"stepwise-tiny-{kind}")
    w.add_context_length(cfg.context)
    w.add_embedding_length(cfg.dim)
    w.add_block_count(cfg.layers)
    w.add_feed_forward_length(cfg.ffn)
    w.add_head_count(cfg.heads)
    w.add_head_count_kv(cfg.heads)
    w.add_layer_norm_rms_eps(cfg.eps)
    w.add_rope_dimension_count(cfg.dim // cfg.heads)
    w.add_rope_freq_base(cfg.rope_base)
    w.add_vocab_size(cfg.vocab)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("llama")
    w.add_token_list(vocab.tokens)
    w.add_token_scores([0.0] * len(vocab))
    # The byte-fallback tokens are stored as UNUSED: llama.cpp still finds them by their text
    # when it tokenizes a character outside the vocabulary, but never writes them out. A network
    # that samples a lone byte (0x80-0xFF) would otherwise write invalid UTF-8, which
    # llama-server's reply parser (common/chat.cpp common_chat_peg_parse) rejects with HTTP 500
    # "does not match the expected Content-only format", on /v1/completions and chat alike.
    w.add_token_types([UNUSED if t == BYTE else t for t in vocab.types])
    w.add_bos_token_id(vocab.bos)
    w.add_eos_token_id(vocab.eos)
    w.add_unk_token_id(vocab.unk)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_add_space_prefix(False)
    template = chat_template if chat_template is not None else (POLICY_CHAT_TEMPLATE if kind == "policy" else JUDGE_CHAT_TEMPLATE)
    if template:
        w.add_chat_template(template)

    def t(name: str, key: str) -> None:
        w.add_tensor(name, sd[key].float().numpy().astype(np.float32))

    t("token_embd.weight", "embed.weight")
    for i in range(cfg.layers):
        p = f"blocks.{i}."
        t(f"blk.{i}.attn_norm.weight", p + "attn_norm.weight")
        t(f"blk.{i}.attn_q.weight", p + "wq.weight")
        t(f"blk.{i}.attn_k.weight", p + "wk.weight")
        t(f"blk.{i}.attn_v.weight", p + "wv.weight")
        t(f"blk.{i}.attn_output.weight", p + "wo.weight")
        t(f"blk.{i}.ffn_norm.weight", p + "ffn_norm.weight")
        t(f"blk.{i}.ffn_gate.weight", p + "w_gate.weight")
        t(f"blk.{i}.ffn_up.weight", p + "w_up.weight")
        t(f"blk.{i}.ffn_down.weight", p + "w_down.weight")
    t("output_norm.weight", "norm.weight")
    t("output.weight", "out.weight")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(out, final)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("ckpt")
    ap.add_argument("out")
    ap.add_argument("--kind", choices=["policy", "judge"], default="policy")
    args = ap.parse_args()
    export(args.ckpt, args.out, args.kind)


if __name__ == "__main__":
    main()
