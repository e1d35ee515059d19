import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/core/model.js';
import { parseJudgePrompt } from '../../src/prompts/judge.js';
import { parsePolicyPrompt } from '../../src/prompts/policy.js';
import { parseRefinePrompt } from '../../src/prompts/refine.js';
import { startCli } from '../support/cli.js';
import { sharedData } from '../support/shared-data.js';
import { type SimServeCli, startSimServeCli } from '../support/sim-serve.js';
import { tempDir } from '../support/temp.js';
import { type ProxiedRequest, startLoggingProxy } from './logging-proxy.js';

/**
 * Issue 15 acceptance 2 and 3: `sample`, `label` and `search` under `--segmentation tags`
 * against a real `stepwise sim serve`, with a logging proxy in between to see every request.
 */

const dir = tempDir('stepwise-tags-');
let sim: SimServeCli | undefined;
let simUrl = '';

beforeAll(async () => {
  sim = await startSimServeCli(join(dir, 'sim-home'));
  simUrl = sim.url;
}, 30_000);

afterAll(async () => {
  await sim?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The policy prompt of a logged completion request (raw or chat), or null. */
function policyOf(r: ProxiedRequest): ReturnType<typeof parsePolicyPrompt> {
  const input =
    typeof r.body.prompt === 'string' ? r.body.prompt : (r.body.messages as ChatMessage[] | undefined);
  return input ? parsePolicyPrompt(input) : null;
}

/** Run a job with `--json`: its summary as JSON on stdout. */
async function run(args: string[]): Promise<string> {
  const r = await startCli([...args, '--json'], join(dir, 'home')).done;
  if (r.code !== 0) throw new Error(`stepwise ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

describe('--segmentation tags against stepwise sim serve (issue 15)', () => {
  it('sample, then label on its output: every chunk-tagged prefix ends with </chunk>', async () => {
    const proxy = await startLoggingProxy(simUrl);
    try {
      const samples = join(dir, 'samples.jsonl');
      const sampleReport = JSON.parse(
        await run([
          'sample',
          '--dataset',
          'sim',
          '--count',
          '4',
          '--n',
          '2',
          '--segmentation',
          'tags',
          '--policy',
          'openai:sim',
          '--base-url',
          `${proxy.url}/v1`,
          '--out',
          samples,
        ]),
      );
      expect(sampleReport.segmentation).toBe('tags');
      expect(sampleReport.brokenTags).toBe(0);
      const records = readFileSync(samples, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(records.every((r) => r.segmentation === 'tags')).toBe(true);
      for (const r of records)
        for (const s of r.samples) {
          expect(s.text).toContain('<chunk>');
          expect(s.segmentation).toBe('tags');
          for (const c of s.chunks) expect(s.text.slice(c.span.start, c.span.end)).toBe(c.text);
        }
      const sampled = proxy.requests.length;
      expect(proxy.requests.map(policyOf).filter((p) => p?.segmentation === 'tags').length).toBeGreaterThan(
        0,
      );

      await run([
        'label',
        '--input',
        samples,
        '--policy',
        'openai:sim',
        '--base-url',
        `${proxy.url}/v1`,
        '--rollouts',
        '2',
        '--out',
        join(dir, 'labels.jsonl'),
      ]);
      const labelPrefixes = proxy.requests
        .slice(sampled)
        .map(policyOf)
        .filter((p) => p !== null);
      const tagged = labelPrefixes.filter((p) => p.prefix.includes('<chunk>'));
      // Label continued the policy's own tagged text (and asked for tags in its prompt too).
      expect(tagged.length).toBeGreaterThan(10);
      expect(labelPrefixes.every((p) => p.segmentation === 'tags')).toBe(true);
      const all = proxy.requests.map(policyOf).filter((p) => p?.prefix.includes('<chunk>'));
      for (const p of all) expect(p?.prefix.trimEnd().endsWith('</chunk>')).toBe(true);
      // The prefixes are the sampled text itself, not a rebuilt one.
      const written = new Set(records.flatMap((r) => r.samples.map((s: { text: string }) => s.text)));
      for (const p of tagged) expect([...written].some((t) => t.startsWith(p.prefix))).toBe(true);
      const labeled = readFileSync(join(dir, 'labels.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(labeled.every((r) => r.segmentation === 'tags')).toBe(true);
      // Each record keeps the text its prefixes were cut from: the policy's own.
      for (const r of labeled) expect(written.has(r.written.text)).toBe(true);

      // export --task refine-local samples a continuation of each good prefix: asked in tags,
      // continuing the policy's own text up to a </chunk>, and quoting it so in the rows.
      const exported = proxy.requests.length;
      const out = join(dir, 'refine-local.jsonl');
      await run([
        'export',
        '--task',
        'refine-local',
        '--format',
        'openrlhf',
        '--input',
        join(dir, 'labels.jsonl'),
        '--policy',
        'openai:sim',
        '--base-url',
        `${proxy.url}/v1`,
        '--chat-template',
        sharedData('chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja'),
        '--out',
        out,
      ]);
      const continued = proxy.requests
        .slice(exported)
        .map(policyOf)
        .filter((p) => p !== null);
      expect(continued.length).toBeGreaterThan(0);
      expect(continued.every((p) => p.segmentation === 'tags')).toBe(true);
      const rows = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      // OpenRLHF rows are rendered prompts (#28 A): the good prefix is the open assistant turn.
      const assistantTurn = '<|im_start|>assistant\n';
      const prefixes = rows.map((r) => {
        const prompt = r.prompt as string;
        return prompt.slice(prompt.lastIndexOf(assistantTurn) + assistantTurn.length);
      });
      const withPrefix = prefixes.filter((prefix) => prefix.length > 0);
      expect(withPrefix.length).toBeGreaterThan(0);
      for (const prefix of withPrefix) {
        expect(prefix.endsWith('</chunk>')).toBe(true);
        expect([...written].some((t) => t.startsWith(prefix))).toBe(true);
        expect(continued.some((p) => p.prefix === prefix)).toBe(true);
      }
    } finally {
      await proxy.close();
    }
  }, 180_000);

  it("search --strategy refine --segmentation tags: refinement prompts quote and continue the policy's chunks", async () => {
    const proxy = await startLoggingProxy(simUrl);
    try {
      const out = join(dir, 'refine.jsonl');
      await run([
        'search',
        '--dataset',
        'sim',
        '--count',
        '6',
        '--strategy',
        'refine',
        '--refine-below',
        '1',
        '--segmentation',
        'tags',
        '--policy',
        'openai:sim?step_error=0.3',
        '--judge',
        'generative:openai:sim?judge=perfect',
        '--base-url',
        `${proxy.url}/v1`,
        '--out',
        out,
      ]);
      const refines = proxy.requests
        .map((r) =>
          Array.isArray(r.body.messages) ? parseRefinePrompt(r.body.messages as ChatMessage[]) : null,
        )
        .filter((x) => x !== null);
      expect(refines.some((x) => x.kind === 'global')).toBe(true);
      expect(refines.every((x) => x.segmentation === 'tags' && x.draft.includes('<chunk>'))).toBe(true);
      const locals = refines.filter((x) => x.kind === 'local' && x.prefix !== '');
      expect(locals.length).toBeGreaterThan(0);
      for (const l of locals) {
        expect(l.prefix.endsWith('</chunk>')).toBe(true);
        // The prefix is the draft as written, up to the chunk before the one marked [BAD].
        expect(l.draft.startsWith(l.prefix)).toBe(true);
        expect(l.draft.slice(l.prefix.length)).toMatch(/^\s*<chunk>\[BAD\] /);
      }
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it('search --strategy chunk-reset --segmentation tags stops step calls at </chunk>', async () => {
    const proxy = await startLoggingProxy(simUrl);
    try {
      const report = JSON.parse(
        await run([
          'search',
          '--dataset',
          'sim',
          '--count',
          '3',
          '--strategy',
          'chunk-reset',
          '--segmentation',
          'tags',
          '--policy',
          'openai:sim',
          '--judge',
          'generative:openai:sim',
          '--base-url',
          `${proxy.url}/v1`,
          '--out',
          join(dir, 'search.jsonl'),
        ]),
      );
      expect(report.segmentation).toBe('tags');
      const policyCalls = proxy.requests.filter((r) => policyOf(r) !== null);
      expect(policyCalls.length).toBeGreaterThan(3);
      for (const r of policyCalls) expect(r.body.stop).toContain('</chunk>');
      // Step prefixes are tagged chunks ending in </chunk>, and the judge sees the history as chunks.
      for (const r of policyCalls) {
        const p = policyOf(r);
        if (p?.prefix) expect(p.prefix.endsWith('</chunk>')).toBe(true);
      }
      const judged = proxy.requests
        .map((r) =>
          Array.isArray(r.body.messages) ? parseJudgePrompt(r.body.messages as ChatMessage[]) : null,
        )
        .filter((j) => j !== null && j.history.length > 0);
      expect(judged.length).toBeGreaterThan(0);
      expect(judged.every((j) => j?.segmentation === 'tags')).toBe(true);
    } finally {
      await proxy.close();
    }
  }, 120_000);
});
