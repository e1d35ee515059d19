"""A llama-architecture decoder exactly as llama.cpp's `llama` arch computes it: RMSNorm,
rotary position embedding over consecutive pairs (llama.cpp's "norm" rope), SwiGLU feed-forward,
no biases. The weights export to GGUF unchanged (no q/k permutation needed)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class Config:
    vocab: int
    dim: int = 128
    layers: int = 4
    heads: int = 4
    ffn: int = 384
    context: int = 256
    rope_base: float = 10000.0
    eps: float = 1e-5

    def to_dict(self) -> dict:
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(cfg: Config, length: int):
    hd = cfg.dim // cfg.heads
    inv = cfg.rope_base ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    ang = torch.arange(length, dtype=torch.float64)[:, None] * inv[None, :]
    return torch.cos(ang).float(), torch.sin(ang).float()


def apply_rope(x, cos, sin):
    # x: (B, H, T, hd); pairs (x[2i], x[2i+1]) rotate by angle pos·θ_i.
    x0, x1 = x[..., 0::2], x[..., 1::2]
    r0 = x0 * cos - x1 * sin
    r1 = x0 * sin + x1 * cos
    return torch.stack((r0, r1), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        d = cfg.dim
        self.attn_norm = RMSNorm(d, cfg.eps)
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, d, bias=False)
        self.wv = nn.Linear(d, d, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.ffn_norm = RMSNorm(d, cfg.eps)
        self.w_gate = nn.Linear(d, cfg.ffn, bias=False)
        self.w_up = nn.Linear(d, cfg.ffn, bias=False)
        self.w_down = nn.Linear(cfg.ffn, d, bias=False)

    def forward(self, x, cos, sin, cache=None):
        B, T, D = x.shape
        H = self.cfg.heads
        hd = D // H
        h = self.attn_norm(x)
        q = self.wq(h).view(B, T, H, hd).transpose(1, 2)
        k = self.wk(h).view(B, T, H, hd).transpose(1, 2)
        v = self.wv(h).view(B, T, H, hd).transpose(1, 2)
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)
        if cache is not None:
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        S = k.shape[2]
        att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        # Causal mask aligned to the end (queries are the last T of S positions).
        mask = torch.ones(T, S, dtype=torch.bool).tril(diagonal=S - T)
        att = att.masked_fill(~mask, float("-inf"))
        out = F.softmax(att, dim=-1) @ v
        x = x + self.wo(out.transpose(1, 2).reshape(B, T, D))
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class Decoder(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.dim, cfg.eps)
        self.out = nn.Linear(cfg.dim, cfg.vocab, bias=False)
        cos, sin = rope_tables(cfg, cfg.context)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self.apply(self._init)
        for b in self.blocks:
            nn.init.normal_(b.wo.weight, std=0.02 / math.sqrt(2 * cfg.layers))
            nn.init.normal_(b.w_down.weight, std=0.02 / math.sqrt(2 * cfg.layers))

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, idx, caches=None, start: int = 0):
        T = idx.shape[1]
        cos, sin = self.cos[start : start + T], self.sin[start : start + T]
        x = self.embed(idx)
        for i, b in enumerate(self.blocks):
            x = b(x, cos, sin, None if caches is None else caches[i])
        return self.out(self.norm(x))

    def parameters_count(self) -> int:
        return sum(p.numel() for p in self.parameters())


@torch.no_grad()
def generate(model: Decoder, prompts: list[list[int]], max_new: int, temperature: float, eos: int,
             gen: torch.Generator) -> list[list[int]]:
    """Sample continuations; prompts of equal length are batched with a KV cache."""
    model.eval()
    results: list[list[int]] = [[] for _ in prompts]
    by_len: dict[int, list[int]] = {}
    for i, p in enumerate(prompts):
        by_len.setdefault(len(p), []).append(i)
    for length, rows in sorted(by_len.items()):
        idx = torch.tensor([prompts[i] for i in rows])
        caches = [{} for _ in model.blocks]
        logits = model(idx, caches, 0)[:, -1]
        done = torch.zeros(len(rows), dtype=torch.bool)
        pos = length
        for _ in range(max_new):
            if pos >= model.cfg.context:
                break
            if temperature <= 0:
                nxt = logits.argmax(-1)
            else:
                probs = F.softmax(logits / temperature, dim=-1)
                nxt = torch.multinomial(probs, 1, generator=gen).squeeze(1)
            for j, r in enumerate(rows):
                if not done[j]:
                    if int(nxt[j]) == eos:
                        done[j] = True
                    else:
                        results[r].append(int(nxt[j]))
            if bool(done.all()):
                break
            logits = model(nxt[:, None], caches, pos)[:, -1]
            pos += 1
    return results
