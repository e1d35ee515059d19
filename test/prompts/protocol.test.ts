import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/core/model.js';
import { type Segmentation, writtenPrefix } from '../../src/core/segment.js';
import {
  type AnyPromptReader,
  BAD_MARKER,
  type PromptInput,
  type PromptRequest,
  type PromptRequestKind,
  renderCriticMessages,
  renderCriticUserMessage,
  renderGlobalRefineMessages,
  renderJudgeMessages,
  renderJudgeUserMessage,
  renderLocalRefineMessages,
  renderOrmMessages,
  renderOrmUserMessage,
  renderPolicyMessages,
  renderPolicyPrompt,
  renderQwenPrmInput,
  type WrittenDraft,
} from '../../src/prompts/index.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import {
  createSeedStream,
  DEFAULT_SIM_OPTIONS,
  generateSimProblems,
  sampleSimSolution,
  simChunksOf,
  simGenerate,
  simPool,
} from '../../src/sim/index.js';

/**
 * The contract between the prompts and the simulated world (src/prompts/protocol.ts): whatever a
 * renderer produces — every prompt form (raw text and chat) under every segmentation — its
 * family's reader reads back to the fields it was rendered from, no other reader reads it, and
 * the sim, handed PROMPT_READERS, answers it in the matching role. A prompt edit that the
 * readers do not follow fails here instead of silently changing the simulated world.
 */

const SEGMENTATIONS: Segmentation[] = ['paragraph', 'tags'];

const [simProblem] = generateSimProblems({ count: 1, seed: 8, minSteps: 5, maxSteps: 5 });
const simChunks = sampleSimSolution(simProblem, DEFAULT_SIM_OPTIONS, 3);

/** Problems and solutions as the sim writes them, and harder text: lines, LaTeX, `$` patterns. */
const WORLDS: Array<{ problem: string; chunks: string[] }> = [
  { problem: simProblem.question, chunks: simChunks },
  {
    problem: 'Let $f(x) = x^2$.\nFind $f(3) + $$1$ and write it as \\boxed{}.',
    chunks: [
      'We have $f(3) = 9$.\nSo the sum is',
      '$9 + 1 = 10$ (with $& and $1 kept).',
      'Answer: \\boxed{10}.',
    ],
  },
];

interface Case {
  name: string;
  family: string;
  input: PromptInput;
  expected: PromptRequest;
  /** For a local refinement: the chunk the draft marks, as the sim's chunker must find it. */
  marked?: number;
  /** For a local refinement: the draft as written, which the marked draft is with the marker out. */
  written?: string;
}

/** The user message as a raw prompt (the text form of one-turn chat prompts). */
function userText(messages: readonly ChatMessage[]): string {
  const user = messages.find((m) => m.role === 'user');
  if (!user) throw new Error('no user message');
  return user.content;
}

/** The draft with the marker and its space taken out again. */
function unmarked(draft: string, marker: string): string {
  return draft.replace(`${marker} `, '');
}

function policyCases(): Case[] {
  const out: Case[] = [];
  for (const { problem, chunks } of WORLDS)
    for (const segmentation of SEGMENTATIONS)
      for (const k of [0, 1, chunks.length - 1]) {
        const prefix = writtenPrefix(chunks.slice(0, k), segmentation);
        const expected: PromptRequest = { kind: 'policy', problem, prefix, segmentation };
        const at = `${segmentation}, ${k} chunks`;
        out.push({
          name: `text, ${at}`,
          family: 'policy',
          input: renderPolicyPrompt(problem, prefix, segmentation),
          expected,
        });
        out.push({
          name: `chat, ${at}`,
          family: 'policy',
          input: renderPolicyMessages(problem, prefix, segmentation),
          expected,
        });
      }
  // A prefix cut mid-chunk (what a step call with max_tokens leaves) is continued as written.
  out.push({
    name: 'chat, prefix cut mid-chunk',
    family: 'policy',
    input: renderPolicyMessages(simProblem.question, 'Step 1: add', 'paragraph'),
    expected: {
      kind: 'policy',
      problem: simProblem.question,
      prefix: 'Step 1: add',
      segmentation: 'paragraph',
    },
  });
  return out;
}

/** A tags draft as a policy may write it: tags on lines of their own, chunks apart by blank lines. */
function writtenTagsDraft(chunks: readonly string[]): WrittenDraft {
  let text = '';
  const ends: number[] = [];
  for (const c of chunks) {
    text += `${text === '' ? '' : '\n\n'}<chunk>\n${c}\n</chunk>`;
    ends.push(text.length);
  }
  return { text, chunks, ends };
}

function refineCases(): Case[] {
  const out: Case[] = [];
  for (const { problem, chunks } of WORLDS)
    for (const segmentation of SEGMENTATIONS) {
      const draft = segmentation === 'tags' ? writtenPrefix(chunks, 'tags') : chunks.join('\n\n');
      const global = renderGlobalRefineMessages(problem, draft, segmentation);
      const expected: PromptRequest = { kind: 'refine', mode: 'global', problem, draft, segmentation };
      out.push({ name: `global chat, ${segmentation}`, family: 'refine', input: global, expected });
      out.push({ name: `global text, ${segmentation}`, family: 'refine', input: userText(global), expected });
      for (let bad = 0; bad < chunks.length; bad++) {
        const local = renderLocalRefineMessages(problem, chunks, bad, segmentation);
        const marked = userText(local).slice(userText(local).indexOf('\n\nDraft:\n') + '\n\nDraft:\n'.length);
        const fields = {
          kind: 'refine',
          mode: 'local',
          problem,
          draft: marked,
          badMarker: BAD_MARKER,
        } as const;
        const prefix = writtenPrefix(chunks.slice(0, bad), segmentation);
        out.push({
          name: `local chat, ${segmentation}, bad chunk ${bad}`,
          family: 'refine',
          input: local,
          expected: { ...fields, prefix, segmentation },
          marked: bad,
          written: draft,
        });
        // The raw-text form is one user turn: there is no good prefix to continue.
        out.push({
          name: `local text, ${segmentation}, bad chunk ${bad}`,
          family: 'refine',
          input: userText(local),
          expected: { ...fields, prefix: '', segmentation },
          marked: bad,
          written: draft,
        });
      }
      // A draft as the policy wrote it (not rebuilt from its chunks).
      if (segmentation === 'tags') {
        const written = writtenTagsDraft(chunks);
        const bad = 1;
        const local = renderLocalRefineMessages(problem, written, bad, 'tags');
        const marked = userText(local).slice(userText(local).indexOf('\n\nDraft:\n') + '\n\nDraft:\n'.length);
        out.push({
          name: 'local chat, tags, the policy-written draft',
          family: 'refine',
          input: local,
          expected: {
            kind: 'refine',
            mode: 'local',
            problem,
            draft: marked,
            badMarker: BAD_MARKER,
            prefix: written.text.slice(0, written.ends[bad - 1]),
            segmentation: 'tags',
          },
          marked: bad,
          written: written.text,
        });
      }
    }
  return out;
}

function judgeCases(): Case[] {
  const out: Case[] = [];
  for (const { problem, chunks } of WORLDS)
    for (const segmentation of SEGMENTATIONS)
      for (let i = 0; i < chunks.length; i++) {
        const input = { problem, history: chunks.slice(0, i), chunk: chunks[i], segmentation };
        const expected: PromptRequest = {
          kind: 'judge',
          problem,
          history: chunks.slice(0, i),
          chunk: chunks[i],
        };
        out.push({
          name: `chat, ${segmentation}, chunk ${i}`,
          family: 'judge',
          input: renderJudgeMessages(input),
          expected,
        });
        out.push({
          name: `text, ${segmentation}, chunk ${i}`,
          family: 'judge',
          input: renderJudgeUserMessage(input),
          expected,
        });
      }
  return out;
}

function criticCases(): Case[] {
  return WORLDS.flatMap(({ problem, chunks }) => {
    const expected: PromptRequest = { kind: 'critic', problem, steps: chunks };
    return [
      { name: 'chat', family: 'critic', input: renderCriticMessages(problem, chunks), expected },
      { name: 'text', family: 'critic', input: renderCriticUserMessage(problem, chunks), expected },
    ];
  });
}

function ormCases(): Case[] {
  return WORLDS.flatMap(({ problem, chunks }) => {
    const solution = chunks.join('\n\n');
    const expected: PromptRequest = { kind: 'orm', problem, solution };
    return [
      { name: 'chat', family: 'orm', input: renderOrmMessages(problem, solution), expected },
      { name: 'text', family: 'orm', input: renderOrmUserMessage(problem, solution), expected },
    ];
  });
}

function prmCases(): Case[] {
  // `/pooling` input exists only as text.
  return WORLDS.map(({ problem, chunks }) => ({
    name: 'pooling text',
    family: 'qwen-prm',
    input: renderQwenPrmInput(problem, chunks),
    expected: { kind: 'prm', problem, steps: chunks },
  }));
}

const CASES: Case[] = [
  ...policyCases(),
  ...refineCases(),
  ...judgeCases(),
  ...criticCases(),
  ...ormCases(),
  ...prmCases(),
];

/** Every kind of request the protocol declares; a new kind must be added here (and get a reader). */
const KINDS: Record<PromptRequestKind, true> = {
  policy: true,
  refine: true,
  judge: true,
  critic: true,
  orm: true,
  prm: true,
};

function readerOf(family: string): AnyPromptReader {
  const reader = PROMPT_READERS.find((r) => r.family === family);
  if (!reader) throw new Error(`no reader of family ${family} in PROMPT_READERS`);
  return reader;
}

describe('prompt protocol: every renderer reads back through its reader', () => {
  it('PROMPT_READERS has one reader per family, a reader for every kind, and every reader has cases here', () => {
    const families = PROMPT_READERS.map((r) => r.family);
    expect(new Set(families).size).toBe(families.length);
    expect([...new Set(PROMPT_READERS.map((r) => r.kind))].sort()).toEqual(Object.keys(KINDS).sort());
    expect([...new Set(CASES.map((c) => c.family))].sort()).toEqual([...families].sort());
  });

  it.each(CASES.map((c) => [`${c.family}: ${c.name}`, c] as const))('%s', (_name, c) => {
    const reader = readerOf(c.family);
    expect(reader.kind).toBe(c.expected.kind);
    expect(reader.read(c.input)).toEqual(c.expected);
    // No other family claims it, so the order of PROMPT_READERS decides nothing for real prompts.
    for (const other of PROMPT_READERS)
      if (other !== reader) expect(other.read(c.input), `${other.family} reads it too`).toBeNull();
    // A local draft is the draft as written with the marker before the bad chunk, where the
    // sim's chunker finds it (the sim keeps the chunks before it when there is no prefix).
    const e = c.expected;
    if (e.kind === 'refine' && e.mode === 'local') {
      expect(unmarked(e.draft, e.badMarker)).toBe(c.written);
      expect(simChunksOf(e.draft).findIndex((x) => x.startsWith(e.badMarker))).toBe(c.marked);
    }
  });

  it('the sim, handed PROMPT_READERS, answers each rendered prompt in the role of its kind', () => {
    const stream = createSeedStream('protocol');
    for (const c of CASES) {
      if (c.expected.kind === 'prm') {
        const scores = simPool(DEFAULT_SIM_OPTIONS, PROMPT_READERS, c.input as string).data;
        expect(scores, c.name).toHaveLength(c.expected.steps.length);
        continue;
      }
      const request = typeof c.input === 'string' ? { prompt: c.input } : { messages: [...c.input] };
      expect(simGenerate(DEFAULT_SIM_OPTIONS, PROMPT_READERS, request, stream).role, c.name).toBe(
        c.expected.kind,
      );
    }
  });

  it('reads nothing else: plain text, empty input, a custom critic template, PRM input as chat', () => {
    const inputs: PromptInput[] = [
      'hello',
      '',
      [],
      [{ role: 'user', content: 'What is 2 + 2?' }],
      renderCriticMessages('P', ['a'], 'Problem: {problem}\nSteps:\n{tagged_response}\nFirst wrong index?'),
      [{ role: 'user', content: renderQwenPrmInput('P', ['a']) }],
    ];
    for (const input of inputs)
      for (const reader of PROMPT_READERS) expect(reader.read(input), `${reader.family}`).toBeNull();
  });
});
