"""A small vocabulary that llama.cpp's SPM ("llama") tokenizer reproduces exactly.

Ids 0–2 are <unk>, <s>, </s>; then the 256 byte-fallback tokens <0x00>…<0xFF>; then
user-defined phrases (llama.cpp splits them out of any text first, longest first, so a whole
instruction or `<chunk>` costs one token); then single characters. With no multi-character
normal tokens, SPM's merges never fire and every other character is one token, so
`encode` here equals llama.cpp's tokenization (checked against llama-server's /tokenize).
"""

from __future__ import annotations

# Token types as GGUF stores them (llama.cpp's LLAMA_TOKEN_TYPE_*).
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

SPACE = "\u2581"  # SPM's escaped space

# stepwise's policy prompt (src/prompts/policy.ts), raw form: instruction + problem mark …
POLICY_HEAD = (
    "Solve the problem step by step. Separate steps with a blank line, and put the final answer in"
    " \\boxed{}.\n\nProblem: "
)
# … and its `--segmentation tags` form (TAGS_POLICY_INSTRUCTION).
TAGS_POLICY_HEAD = (
    "Solve the problem step by step, writing your reasoning as a sequence of chunks, each wrapped in"
    " <chunk> and </chunk>. Give every chunk a single clear purpose, such as setting up an equation,"
    " carrying out one self-contained calculation, or drawing a conclusion, and open a new chunk whenever"
    " the focus or phase of your reasoning changes. Write nothing outside the chunks, and put the final"
    " answer in \\boxed{} inside the last chunk.\n\nProblem: "
)
SOLUTION_MARK = "\n\nSolution:\n"
HEADS = {"paragraph": POLICY_HEAD, "tags": TAGS_POLICY_HEAD}

BASE_PHRASES = [
    POLICY_HEAD,
    TAGS_POLICY_HEAD,
    SOLUTION_MARK,
    "<chunk>",
    "</chunk>",
    "\\boxed{",
    "Start with ",
    ". What is the final number?",
    ", then ",
    "Add ",
    "add ",
    "Subtract ",
    "subtract ",
    "Multiply by ",
    "multiply by ",
]

CHARS = [chr(c) for c in range(32, 127)] + ["×", "\n"]


class Vocab:
    def __init__(self, phrases: list[str], extra_phrases: tuple[str, ...] = ()):
        self.tokens: list[str] = ["<unk>", "<s>", "</s>"]
        self.types: list[int] = [UNKNOWN, CONTROL, CONTROL]
        for b in range(256):
            self.tokens.append(f"<0x{b:02X}>")
            self.types.append(BYTE)
        self.phrases = list(dict.fromkeys(phrases))
        for p in self.phrases:
            self.tokens.append(p)
            self.types.append(USER_DEFINED)
        for c in CHARS:
            self.tokens.append(SPACE if c == " " else c)
            self.types.append(NORMAL)
        # Appended after the characters so a vocabulary that extends another keeps its ids.
        for p in extra_phrases:
            if p not in self.phrases:
                self.phrases.append(p)
                self.tokens.append(p)
                self.types.append(USER_DEFINED)
        self.id_of = {}
        for i, (t, ty) in enumerate(zip(self.tokens, self.types)):
            if ty in (NORMAL, USER_DEFINED):
                self.id_of.setdefault((ty, t), i)
        # llama.cpp tries user-defined tokens longest first.
        self.by_length = sorted(self.phrases, key=len, reverse=True)
        self.bos, self.eos, self.unk = 1, 2, 0

    def __len__(self) -> int:
        return len(self.tokens)

    def _chars(self, text: str, out: list[int]) -> None:
        for ch in text.replace(" ", SPACE):
            i = self.id_of.get((NORMAL, ch))
            if i is not None:
                out.append(i)
            else:
                out.extend(3 + b for b in ch.encode("utf-8"))

    def encode(self, text: str) -> list[int]:
        # Fragments: (is_token, payload) — the same partition llama.cpp does.
        frags: list[tuple[bool, object]] = [(False, text)]
        for phrase in self.by_length:
            pid = self.id_of[(USER_DEFINED, phrase)]
            nxt: list[tuple[bool, object]] = []
            for is_tok, payload in frags:
                if is_tok:
                    nxt.append((is_tok, payload))
                    continue
                parts = str(payload).split(phrase)
                for j, part in enumerate(parts):
                    if j > 0:
                        nxt.append((True, pid))
                    if part:
                        nxt.append((False, part))
            frags = nxt
        out: list[int] = []
        for is_tok, payload in frags:
            if is_tok:
                out.append(int(payload))
            else:
                self._chars(str(payload), out)
        return out

    def decode(self, ids: list[int]) -> str:
        # Byte-fallback tokens write nothing, as llama.cpp does with the GGUF's types
        # (export_gguf.py stores them as UNUSED so a sampled lone byte cannot break UTF-8).
        buf = bytearray()
        for i in ids:
            t, ty = self.tokens[i], self.types[i]
            if ty == NORMAL:
                buf.extend(t.replace(SPACE, " ").encode("utf-8"))
            elif ty == USER_DEFINED:
                buf.extend(t.encode("utf-8"))
        return buf.decode("utf-8", errors="replace")


def policy_vocab() -> Vocab:
    return Vocab(BASE_PHRASES)


def prompt_ids(vocab: Vocab, question: str, mode: str = "tags") -> list[int]:
    """The policy's prompt for `question` as stepwise's raw policy prompt renders it (the
    instruction of segmentation `mode`, the question, SOLUTION_MARK), after the start token."""
    return [vocab.bos] + vocab.encode(HEADS[mode] + question + SOLUTION_MARK)


# stepwise's generative judge prompt (src/prompts/judge.ts) as the gguf backend flattens it
# (src/models/gguf.ts flattenMessages: "system: …\n\nuser: …\n\nassistant: ").
JUDGE_SYSTEM = (
    "You are a careful verifier of step-by-step mathematical reasoning. You judge one new reasoning chunk at a time."
)
JUDGE_INSTRUCTION = (
    "First write a short analysis: state what the new chunk is trying to do, then check its logic and "
    "every calculation against the problem and the previous steps. A chunk that only restates or plans "
    "without calculating can still be correct. Then give your final judgment of the new chunk alone as "
    "\\boxed{Positive} if it is correct and useful, or \\boxed{Negative} if it contains an error."
)
JUDGE_HEAD = f"system: {JUDGE_SYSTEM}\n\nuser: ## Problem\n"
JUDGE_TAIL = f"\n\n## Task\n{JUDGE_INSTRUCTION}\n\nassistant: "
JUDGE_PHRASES = (
    JUDGE_HEAD,
    "\n\n## Previous reasoning steps\n",
    "(none: this is the first chunk)",
    "[Step ",
    "\n\n## New reasoning chunk\n",
    JUDGE_TAIL,
    "\\boxed{Positive}",
    "\\boxed{Negative}",
)


def judge_vocab() -> Vocab:
    """The policy's vocabulary plus the judge prompt's phrases (policy ids unchanged, so the
    judge starts from the policy's weights)."""
    return Vocab(BASE_PHRASES, JUDGE_PHRASES)
