import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChatMessage, GenerateRequest, LanguageModel } from '../../src/core/model.js';
import { splitWritten } from '../../src/core/segment.js';
import { createGenerativeJudge } from '../../src/judge/generative.js';
import { createOrmJudge } from '../../src/judge/orm.js';
import { createRolloutJudge } from '../../src/judge/rollout.js';
import { createPolicy } from '../../src/models/policy.js';
import { loadChatTemplate } from '../../src/prompts/chat-template.js';
import { parseOrmPrompt } from '../../src/prompts/orm.js';
import { parsePolicyPrompt, TAGS_POLICY_INSTRUCTION } from '../../src/prompts/policy.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import {
  BAD_MARKER,
  parseRefinePrompt,
  renderGlobalRefineMessages,
  renderLocalRefineMessages,
} from '../../src/prompts/refine.js';
import { runStrategy } from '../../src/search/registry.js';
import { simDatasetProblems } from '../../src/sim/dataset.js';
import { createSimModel } from '../../src/sim/model.js';
import { exportTrainingData, type RefinePrefix } from '../../src/train/export.js';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp.js';

/**
 * GLoRe refinement under `--segmentation tags` (issue 15): the drafts are quoted and continued as
 * the policy wrote them, tags and whitespace included, and every prefix ends right after `</chunk>`.
 * The policy here writes its tags with newlines inside (`<chunk>\n…\n</chunk>`), a form no
 * rebuild from chunk contents produces, so a prefix rebuilt instead of cut from its text shows.
 */

/** The policy's own form: a newline after each `<chunk>` and before each `</chunk>`. */
const ownForm = (t: string): string => t.replace(/<chunk>/g, '<chunk>\n').replace(/<\/chunk>/g, '\n</chunk>');

/** The sim world with its tagged replies rewritten in {@link ownForm}; every request is recorded. */
function ownFormSim(spec: string): LanguageModel & { requests: GenerateRequest[] } {
  const sim = createSimModel(spec, PROMPT_READERS);
  const requests: GenerateRequest[] = [];
  return {
    ...sim,
    requests,
    async generate(request, options) {
      requests.push(request);
      const r = await sim.generate(request, options);
      return { ...r, samples: r.samples.map((s) => ({ ...s, text: ownForm(s.text) })) };
    },
  };
}

const dir = tempDir('stepwise-refine-tags-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('refinement prompts under tags', () => {
  const written = '<chunk>\nA.\n</chunk>\n\n<chunk>\nB.\n</chunk>\n\n<chunk>\nC \\boxed{1}.\n</chunk>';
  const split = splitWritten(written, 'tags');
  const draft = { text: written, chunks: split.chunks.map((c) => c.text), ends: split.ends };

  it('local: [BAD] inside the bad chunk of the text as written; the good prefix is that text up to a </chunk>', () => {
    const msgs = renderLocalRefineMessages('Q', draft, 1, 'tags');
    expect(msgs[0].content).toContain(`Draft:\n<chunk>\nA.\n</chunk>\n\n<chunk>\n${BAD_MARKER} B.\n</chunk>`);
    expect(msgs[0].content).toContain('<chunk> and </chunk>');
    expect(msgs[1]).toEqual({ role: 'assistant', content: '<chunk>\nA.\n</chunk>' });
    expect(parseRefinePrompt(msgs)).toMatchObject({
      kind: 'local',
      segmentation: 'tags',
      prefix: msgs[1].content,
    });
    // The first chunk bad: no assistant turn at all.
    expect(renderLocalRefineMessages('Q', draft, 0, 'tags')).toHaveLength(1);
    // Chunk contents only (the text is not known): rebuilt in tags, still ending right after </chunk>.
    const rebuilt = renderLocalRefineMessages('Q', ['A.', 'B.', 'C.'], 2, 'tags');
    expect(rebuilt[1].content).toBe('<chunk>A.</chunk>\n<chunk>B.</chunk>');
    expect(rebuilt[0].content).toContain(`<chunk>${BAD_MARKER} C.</chunk>`);
  });

  it('global: asks for chunks and quotes the draft with its tags; paragraph prompts are unchanged', () => {
    const g = renderGlobalRefineMessages('Q', written, 'tags');
    expect(g[0].content).toContain('<chunk> and </chunk>');
    expect(g[0].content.endsWith(`Draft:\n${written}`)).toBe(true);
    expect(parseRefinePrompt(g)).toMatchObject({ kind: 'global', segmentation: 'tags', draft: written });
    const p = renderGlobalRefineMessages('Q', 'a\n\nb');
    expect(p[0].content).toContain('Separate steps with a blank line');
    expect(parseRefinePrompt(p)?.segmentation).toBe('paragraph');
  });
});

describe('GLoRe search under --segmentation tags (in process, sim world)', () => {
  it('local refinement continues the draft exactly as the policy wrote it, ending right after </chunk>', async () => {
    const model = ownFormSim('sim?step_error=0.3');
    const policy = createPolicy(model, { segmentation: 'tags' });
    const judge = createGenerativeJudge(createSimModel('sim?judge=perfect', PROMPT_READERS));
    const orm = createSimModel('sim?orm_sensitivity=1&orm_specificity=1', PROMPT_READERS);
    const outcome = createOrmJudge(orm);
    let checked = 0;
    for (const p of simDatasetProblems(40, { seed: 9 })) {
      model.requests.length = 0;
      const r = await runStrategy('refine', p, { segmentation: 'tags' }, { policy, judge, outcome });
      const fe = r.stats.firstError as number;
      if (!(fe > 0)) continue;
      const draft = r.trace.find((t) => t.label === 'draft')!.text;
      const draftSplit = splitWritten(draft, 'tags');
      expect(draftSplit.method).toBe('tags');
      const messagesOf = (req: GenerateRequest) => (req.messages ?? []) as ChatMessage[];
      const refines = model.requests.map((q) => parseRefinePrompt(messagesOf(q))).filter((x) => x !== null);
      const global = refines.find((x) => x.kind === 'global')!;
      expect(global).toMatchObject({ segmentation: 'tags', draft });
      const local = refines.find((x) => x.kind === 'local')!;
      const own = draft.slice(0, draftSplit.ends[fe - 1]);
      expect(own.endsWith('\n</chunk>')).toBe(true);
      expect(local.segmentation).toBe('tags');
      expect(local.prefix).toBe(own);
      const badAt = draftSplit.chunks[fe].span.start;
      expect(local.draft).toBe(`${draft.slice(0, badAt)}${BAD_MARKER} ${draft.slice(badAt)}`);
      // The local solution is the policy's prefix plus its continuation, all well-formed chunks.
      const localNode = r.trace.find((t) => t.label === 'local')!;
      expect(localNode.text.startsWith(own)).toBe(true);
      expect(splitWritten(localNode.text, 'tags').method).toBe('tags');
      checked++;
      if (checked >= 3) break;
    }
    expect(checked).toBe(3);
  });

  it('judges that read or continue prefixes see the chunks as chunks: ORM solution, rollout prefixes', async () => {
    const [p] = simDatasetProblems(1, { seed: 3 });
    const chunks = ['We start with the first number.', 'Then we go on.'];
    const orm = ownFormSim('sim');
    await createOrmJudge(orm).judge(p, chunks, { segmentation: 'tags' });
    const ormSolution = parseOrmPrompt(orm.requests[0].messages as ChatMessage[])!.solution;
    expect(ormSolution).toBe('<chunk>We start with the first number.</chunk>\n<chunk>Then we go on.</chunk>');

    const roll = ownFormSim('sim');
    await createRolloutJudge(roll, { rollouts: 2 }).judge(p, chunks, { segmentation: 'tags' });
    const asked = roll.requests.map((q) => parsePolicyPrompt(q.prompt ?? (q.messages as ChatMessage[])));
    expect(asked.length).toBeGreaterThan(0);
    for (const a of asked) {
      expect(a?.segmentation).toBe('tags');
      if (a?.prefix) expect(a.prefix.endsWith('</chunk>')).toBe(true);
    }
    expect(String(roll.requests[0].prompt ?? '')).toContain(TAGS_POLICY_INSTRUCTION);
  });
});

describe('export --task refine-local under tags', () => {
  const text =
    '<chunk>\nFirst.\n</chunk>\n\n<chunk>\nSecond.\n</chunk>\n\n<chunk>\nThird \\boxed{2}.\n</chunk>';
  const split = splitWritten(text, 'tags');
  const record = (written: boolean) => ({
    id: 's1',
    problem: 'Q?',
    answer: '3',
    segmentation: 'tags',
    ...(written ? { written: { text, ends: split.ends } } : {}),
    chunks: split.chunks.map((c, i) => ({
      text: c.text,
      q: i === 0 ? 1 : 0,
      rollouts: 2,
      labels: { 'abs-q': i === 0 },
    })),
    firstError: { 'abs-q': 1 },
  });

  const qwenTemplate = loadChatTemplate(sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja'));

  it("quotes the label record's written text and continues it from right after </chunk>", async () => {
    const from = join(dir, 'labels.jsonl');
    writeFileSync(from, `${JSON.stringify(record(true))}\n`);
    const out = join(dir, 'local.jsonl');
    /** Export, answering each prefix with `reply`; returns the prefixes asked about. */
    const exportAnswering = async (reply: string) => {
      const asked: RefinePrefix[] = [];
      await exportTrainingData({
        from,
        task: 'refine-local',
        format: 'openrlhf',
        out,
        // OpenRLHF refine-local rows are prompt strings rendered by the model's own template (#28 A).
        chatTemplate: qwenTemplate,
        findContinuation: async (_q, _gold, prefix) => {
          asked.push(prefix);
          return reply;
        },
      });
      return asked;
    };
    expect(await exportAnswering('\n<chunk>\nSo \\boxed{3}.\n</chunk>')).toEqual([
      { chunks: ['First.'], text: '<chunk>\nFirst.\n</chunk>', segmentation: 'tags' },
    ]);
    const row = JSON.parse(readFileSync(out, 'utf8').trim());
    // The user turn quotes the draft with its tags; the assistant turn is open on the good prefix.
    expect(row.prompt).toContain('<chunk> and </chunk>');
    expect(row.prompt).toContain(`<chunk>\n${BAD_MARKER} Second.\n</chunk>`);
    expect(row.prompt.endsWith('<|im_start|>assistant\n<chunk>\nFirst.\n</chunk>')).toBe(true);
    expect(row.response).toBe('\n<chunk>\nSo \\boxed{3}.\n</chunk>');

    // A record without its text (older files): rebuilt in tags, still ending right after </chunk>.
    writeFileSync(from, `${JSON.stringify(record(false))}\n`);
    expect((await exportAnswering('x'))[0].text).toBe('<chunk>First.</chunk>');

    // A written text that does not hold the chunks is refused, naming the solution.
    writeFileSync(
      from,
      `${JSON.stringify({ ...record(true), written: { text: 'other', ends: split.ends } })}\n`,
    );
    await expect(
      exportTrainingData({
        from,
        task: 'refine-local',
        format: 'openrlhf',
        out,
        chatTemplate: qwenTemplate,
        findContinuation: async () => 'x',
      }),
    ).rejects.toThrow(/line 1, field "written": solution s1: does not match its chunks/);
  });
});
