"""Read a tiny GGUF (written by export_gguf.py: llama arch, F32, unpermuted) back into the
PyTorch decoder, so a committed model can be trained further without its training checkpoint.

    PYTHONPATH=python:<gguf-py> python3 -m tiny.from_gguf models/tiny/policy.gguf OUT.pt
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from .model import Config, Decoder

NAMES = {
    "attn_norm.weight": "attn_norm.weight", "attn_q.weight": "wq.weight", "attn_k.weight": "wk.weight",
    "attn_v.weight": "wv.weight", "attn_output.weight": "wo.weight", "ffn_norm.weight": "ffn_norm.weight",
    "ffn_gate.weight": "w_gate.weight", "ffn_up.weight": "w_up.weight", "ffn_down.weight": "w_down.weight",
}


def field(reader, key: str):
    f = reader.fields[key]
    return f.parts[f.data[0]].tolist()[0]


def load(path: str) -> dict:
    """A checkpoint dict ({model, config, step, seconds, seed}) holding the GGUF's weights."""
    import gguf  # from llama.cpp's gguf-py

    r = gguf.GGUFReader(path)
    tensors = {t.name: t for t in r.tensors}
    vocab, dim = (int(x) for x in reversed(tensors["token_embd.weight"].shape.tolist()))
    layers = int(field(r, "llama.block_count"))
    cfg = Config(vocab=vocab, dim=dim, layers=layers, heads=int(field(r, "llama.attention.head_count")),
                 ffn=int(field(r, "llama.feed_forward_length")), context=int(field(r, "llama.context_length")),
                 rope_base=float(field(r, "llama.rope.freq_base")),
                 eps=float(field(r, "llama.attention.layer_norm_rms_epsilon")))
    model = Decoder(cfg)
    sd = model.state_dict()

    def put(key: str, name: str) -> None:
        t = tensors[name]
        data = np.array(t.data, dtype=np.float32).reshape(sd[key].shape)
        sd[key] = torch.from_numpy(data.copy())

    put("embed.weight", "token_embd.weight")
    put("norm.weight", "output_norm.weight")
    put("out.weight", "output.weight")
    for i in range(layers):
        for g, k in NAMES.items():
            put(f"blocks.{i}.{k}", f"blk.{i}.{g}")
    return {"model": sd, "config": cfg.to_dict(), "step": 0, "seconds": 0.0, "seed": None, "from": path}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("gguf")
    ap.add_argument("out")
    args = ap.parse_args()
    torch.save(load(args.gguf), args.out)


if __name__ == "__main__":
    main()
