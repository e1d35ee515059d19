import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createProviderRegistry } from '../../src/models/registry.js';
import { DEFAULT_PROVIDERS } from '../../src/providers/default.js';
import { providerSettingsDocs } from '../../src/providers/docs.js';
import { constantProvider } from '../fixtures/backends/constant-provider.js';
import { firstRow, stepwise, useTempHome } from '../support/settings-probe.js';

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

describe('a model backend is one file plus one registry line', () => {
  // The CLI records its runs under STEPWISE_HOME: a temporary one, never the checkout's .stepwise.
  const home = useTempHome('stepwise-backend-');

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
    const dir = home();
    const problems = join(dir, 'problems.jsonl');
    writeFileSync(problems, `${JSON.stringify({ id: 'p1', question: 'What is 40 + 2?', answer: '42' })}\n`);
    const out = join(dir, 'samples.jsonl');
    const args = ['sample', '--dataset', 'jsonl', '--path', problems, '--policy', 'constant:42?tokens=4'];
    const ok = await stepwise([...args, '--n', '2', '--out', out, '--quiet']);
    expect(ok.error).toBeUndefined();
    const row = firstRow<{ samples: Record<string, unknown>[] }>(out);
    expect(row.samples).toHaveLength(2);
    expect(row.samples[0]).toMatchObject({ answer: '42', correct: true, tokens: 4 });
    expect(existsSync(join(dir, 'home', 'store.sqlite'))).toBe(true);
    // A typo in the spec's query stops the command before any work, naming the key.
    const typo = await stepwise([
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
    ]);
    expect(typo.error?.message).toMatch(/unknown option "tokns" of constant/);
  });
});
