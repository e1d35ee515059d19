import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createProviderRegistry } from '../../src/models/registry.js';
import { DEFAULT_PROVIDERS } from '../../src/providers/default.js';
import { providerSettingsDocs } from '../../src/providers/docs.js';
import { constantProvider } from '../fixtures/backends/constant-provider.js';
import { tempDir } from '../support/temp.js';

// The recipe of docs/extending.md, "A model backend": the backend is one file
// (test/fixtures/backends/constant-provider.ts) and one line of the registry (below, as in
// src/providers/default.ts). The CLI's registry (src/cli/providers.ts) is that registry here.
const registry = vi.hoisted(() => ({ value: undefined as unknown }));
vi.mock('../../src/cli/providers.js', () => ({
  get providers() {
    return registry.value;
  },
}));
registry.value = createProviderRegistry({ ...DEFAULT_PROVIDERS, constant: constantProvider });
const providers = registry.value as ReturnType<typeof createProviderRegistry>;

const dir = tempDir('stepwise-backend-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a model backend is one file plus one registry line', () => {
  it('the registry builds its models, reads its settings from the spec and names a bad key', async () => {
    const model = await providers.languageModel('constant:42?tokens=3');
    const r = await model.generate({ prompt: 'x', n: 2 });
    expect(r.samples.map((s) => s.completionTokens)).toEqual([3, 3]);
    expect(r.samples[0]!.text).toContain('\\boxed{42}');
    expect(() => providers.settingsOf('constant:42?token=3')).toThrow(
      /unknown option "token" of constant \(known: tokens, opening\)/,
    );
    expect(() => providers.settingsOf('constant:42?tokens=0')).toThrow(/tokens must be a positive integer/);
    expect(providerSettingsDocs(providers)).toContain('| `tokens` | 5 | a positive integer |');
  });

  it('the CLI takes its spec: `stepwise sample --policy constant:…` samples with it', async () => {
    const { buildProgram } = await import('../../src/cli/main.js');
    const problems = join(dir, 'problems.jsonl');
    writeFileSync(problems, `${JSON.stringify({ id: 'p1', question: 'What is 40 + 2?', answer: '42' })}\n`);
    const out = join(dir, 'samples.jsonl');
    const args = ['sample', '--dataset', 'jsonl', '--path', problems, '--policy', 'constant:42?tokens=4'];
    await buildProgram().parseAsync(['node', 'stepwise', ...args, '--n', '2', '--out', out, '--quiet']);
    const row = JSON.parse(readFileSync(out, 'utf8').trim().split('\n')[0]!);
    expect(row.samples).toHaveLength(2);
    expect(row.samples[0]).toMatchObject({ answer: '42', correct: true, tokens: 4 });
    // A typo in the spec's query stops the command before any work, naming the key.
    await expect(
      buildProgram().parseAsync([
        'node',
        'stepwise',
        'sample',
        '--dataset',
        'jsonl',
        '--path',
        problems,
        '--policy',
        'constant:42?tokns=4',
        '--n',
        '1',
        '--out',
        join(dir, 'x.jsonl'),
        '--quiet',
      ]),
    ).rejects.toThrow(/unknown option "tokns" of constant/);
  });
});
