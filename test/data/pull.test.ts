import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StepwiseError, UsageError } from '../../src/core/errors.js';
import { loadGsm8k, PULL_SOURCES, pullDataset } from '../../src/data/index.js';
import { tempDir } from '../support/temp.js';
import { jsonl } from './fixtures.js';

/** A fetch that serves fixed bodies by URL and records what was asked (no network). */
function fakeFetch(bodies: Record<string, string>): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  const fake = async (input: string | URL | Request) => {
    const url = String(input);
    urls.push(url);
    const body = bodies[url];
    return body === undefined
      ? new Response('missing', { status: 404, statusText: 'Not Found' })
      : new Response(body);
  };
  return { fetch: fake as typeof fetch, urls };
}

describe('data pull', () => {
  it('downloads each default split into <dest>/<set>/ where the loaders find it', async () => {
    const dest = tempDir('stepwise-pull-');
    const test = PULL_SOURCES.gsm8k!.file('test');
    const train = PULL_SOURCES.gsm8k!.file('train');
    const rows = jsonl([{ question: 'Q?', answer: '#### 3' }]);
    const { fetch, urls } = fakeFetch({ [test.url]: rows, [train.url]: rows });
    const progress: number[] = [];
    const { files } = await pullDataset('gsm8k', {
      dest,
      fetch,
      onProgress: (_f, received) => progress.push(received),
    });
    expect(urls).toEqual([test.url, train.url]);
    expect(test.url).toBe(
      'https://raw.githubusercontent.com/openai/grade-school-math/master/grade_school_math/data/test.jsonl',
    );
    expect(files).toEqual([join(dest, 'gsm8k/test.jsonl'), join(dest, 'gsm8k/train.jsonl')]);
    expect(readFileSync(files[0], 'utf8')).toBe(rows);
    expect(progress.at(-1)).toBe(Buffer.byteLength(rows));
    expect(readdirSync(join(dest, 'gsm8k')).filter((f) => f.endsWith('.part'))).toEqual([]);
    expect((await loadGsm8k({ path: join(dest, 'gsm8k') })).records[0].answer).toBe('3');
  });

  it('offline: a clear message naming the URL and where to put the file; no partial file left', async () => {
    const dest = tempDir('stepwise-pull-');
    const offline = (async () => {
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }),
      });
    }) as typeof fetch;
    const err = await pullDataset('mbpp', { dest, fetch: offline }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepwiseError);
    expect((err as Error).message).toMatch(
      /could not download mbpp from https:\/\/raw\.githubusercontent\.com\/.*mbpp\.jsonl \(cannot resolve the host, ENOTFOUND: offline\?\)\. Without internet/,
    );
    expect((err as Error).message).toContain(join(dest, 'mbpp/mbpp.jsonl'));
    expect(existsSync(join(dest, 'mbpp/mbpp.jsonl.part'))).toBe(false);
  });

  it('HTTP errors and Git LFS pointers are failures, not data', async () => {
    const dest = tempDir('stepwise-pull-');
    const { url } = PULL_SOURCES.prm800k!.file('phase2_test');
    const lfs = fakeFetch({ [url]: 'version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n' });
    await expect(pullDataset('prm800k', { dest, fetch: lfs.fetch })).rejects.toThrow(/Git LFS pointer/);
    expect(existsSync(join(dest, 'prm800k/phase2_test.jsonl'))).toBe(false);
    await expect(pullDataset('math500', { dest, fetch: fakeFetch({}).fetch })).rejects.toThrow(
      /HTTP 404 Not Found/,
    );
  });

  it('sets without a public single-file home, and unknown splits, are usage errors', async () => {
    await expect(pullDataset('math')).rejects.toThrow(UsageError);
    await expect(pullDataset('math')).rejects.toThrow(/hendrycks\/math/);
    await expect(pullDataset('jsonl')).rejects.toThrow(UsageError);
    await expect(pullDataset('processbench', { split: 'aime' })).rejects.toThrow(
      /unknown processbench split "aime"/,
    );
  });
});
