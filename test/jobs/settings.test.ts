import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { runJsonlJob } from '../../src/jobs/run-job.js';
import { flagName, jobSettings, settingsDifferences } from '../../src/jobs/settings.js';
import { tempDir } from '../support/temp.js';

const dir = tempDir('stepwise-settings-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function job(out: string, settings: ReturnType<typeof jobSettings>, fresh = false, items = ['a', 'b']) {
  return runJsonlJob<string, { id: string; v: number }>({
    items,
    keyOf: (s) => s,
    keyOfOutput: (r) => r.id,
    out,
    fresh,
    settings,
    process: async (s) => ({ id: s, v: Number(settings.settings.n) }),
  });
}

describe('job settings', () => {
  it('hash is canonical: key order and unset values do not change it, a value does', () => {
    const a = jobSettings('sample', { n: 2, policy: 'sim', topP: undefined });
    const b = jobSettings('sample', { policy: 'sim', n: 2 });
    expect(a.hash).toBe(b.hash);
    expect(a.hash).toMatch(/^[0-9a-f]{16}$/);
    expect(jobSettings('sample', { policy: 'sim', n: 4 }).hash).not.toBe(a.hash);
    expect(jobSettings('label', { policy: 'sim', n: 2 }).hash).not.toBe(a.hash);
    expect(settingsDifferences(a, jobSettings('sample', { policy: 'sim', n: 4, topP: 0.9 }))).toEqual([
      { key: 'n', recorded: 2, current: 4 },
      { key: 'topP', recorded: undefined, current: 0.9 },
    ]);
    expect(flagName('maxTokens')).toBe('--max-tokens');
  });

  it('every row records the settings; a rerun with other settings exits 2 naming them and leaves the file alone', async () => {
    const out = join(dir, 'rows.jsonl');
    const s2 = jobSettings('t', { n: 2, form: 'raw' });
    await job(out, s2);
    const before = readFileSync(out, 'utf8');
    const rows = before
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const r of rows) expect(r.job).toEqual(s2);

    // Same settings: resumes (adds the missing item only).
    const more = await job(out, s2, false, ['a', 'b', 'c']);
    expect(more.map((r) => r.id)).toEqual(['a', 'b', 'c']);

    const s4 = jobSettings('t', { n: 4, form: 'raw' });
    const after = readFileSync(out, 'utf8');
    const err = await job(out, s4).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(/--n 2 in the file, 4 now/);
    expect((err as Error).message).not.toMatch(/--form/);
    expect(readFileSync(out, 'utf8')).toBe(after);

    // --fresh starts over with the new settings.
    const fresh = await job(out, s4, true);
    expect(fresh.map((r) => r.v)).toEqual([4, 4]);
  });

  it('refuses rows without settings and rows of another command', async () => {
    const bare = join(dir, 'bare.jsonl');
    writeFileSync(bare, '{"id":"a","v":1}\n');
    await expect(job(bare, jobSettings('t', { n: 1 }))).rejects.toThrow(
      /line 1: this row records no settings/,
    );
    const other = join(dir, 'other.jsonl');
    await job(other, jobSettings('sample', { n: 1 }));
    await expect(job(other, jobSettings('label', { n: 1 }))).rejects.toThrow(
      /holds `stepwise sample` output, not `stepwise label` output/,
    );
  });
});
