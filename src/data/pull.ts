import { createWriteStream, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StepwiseError, UsageError } from '../core/errors.js';
import { dataCacheDir } from './locate.js';
import { PROCESSBENCH_SUBSETS } from './processbench.js';
import type { DatasetName } from './types.js';

/** One file to download: its public URL and where it goes, relative to the cache folder. */
export interface PullFile {
  url: string;
  file: string;
}

/** Where a data set is downloaded from: its public home and the files per split. */
export interface PullSource {
  home: string;
  /** Split names `stepwise data pull --split` accepts; the first ones listed in `defaults` are pulled without it. */
  splits: readonly string[];
  defaults: readonly string[];
  file(split: string): PullFile;
}

const GITHUB = 'https://raw.githubusercontent.com';
const HF = 'https://huggingface.co/datasets';

/** The public home of every set `data pull` can fetch. The full MATH test set has no single-file home. */
export const PULL_SOURCES: Readonly<Partial<Record<DatasetName, PullSource>>> = {
  gsm8k: {
    home: 'https://github.com/openai/grade-school-math',
    splits: ['test', 'train', 'test_socratic', 'train_socratic'],
    defaults: ['test', 'train'],
    file: (s) => ({
      url: `${GITHUB}/openai/grade-school-math/master/grade_school_math/data/${s}.jsonl`,
      file: `gsm8k/${s}.jsonl`,
    }),
  },
  math500: {
    home: 'https://huggingface.co/datasets/HuggingFaceH4/MATH-500',
    splits: ['test'],
    defaults: ['test'],
    file: () => ({ url: `${HF}/HuggingFaceH4/MATH-500/resolve/main/test.jsonl`, file: 'math500/test.jsonl' }),
  },
  processbench: {
    home: 'https://huggingface.co/datasets/Qwen/ProcessBench',
    splits: PROCESSBENCH_SUBSETS,
    defaults: PROCESSBENCH_SUBSETS,
    file: (s) => ({ url: `${HF}/Qwen/ProcessBench/resolve/main/${s}.json`, file: `processbench/${s}.json` }),
  },
  prm800k: {
    home: 'https://github.com/openai/prm800k',
    splits: ['phase1_train', 'phase1_test', 'phase2_train', 'phase2_test'],
    defaults: ['phase2_test'],
    // The files are Git LFS objects: raw.githubusercontent.com would serve the pointer only.
    file: (s) => ({
      url: `https://media.githubusercontent.com/media/openai/prm800k/main/prm800k/data/${s}.jsonl`,
      file: `prm800k/${s}.jsonl`,
    }),
  },
  mathshepherd: {
    home: 'https://huggingface.co/datasets/peiyi9979/Math-Shepherd',
    splits: ['math-shepherd'],
    defaults: ['math-shepherd'],
    file: () => ({
      url: `${HF}/peiyi9979/Math-Shepherd/resolve/main/math-shepherd.jsonl`,
      file: 'mathshepherd/math-shepherd.jsonl',
    }),
  },
  humaneval: {
    home: 'https://github.com/openai/human-eval',
    splits: ['test'],
    defaults: ['test'],
    file: () => ({
      url: `${GITHUB}/openai/human-eval/master/data/HumanEval.jsonl.gz`,
      file: 'humaneval/HumanEval.jsonl.gz',
    }),
  },
  mbpp: {
    home: 'https://github.com/google-research/google-research/tree/master/mbpp',
    splits: ['full'],
    defaults: ['full'],
    file: () => ({
      url: `${GITHUB}/google-research/google-research/master/mbpp/mbpp.jsonl`,
      file: 'mbpp/mbpp.jsonl',
    }),
  },
};

export interface PullOptions {
  /** One split instead of the set's defaults. */
  split?: string;
  /** Cache folder to write into (default {@link dataCacheDir}). */
  dest?: string;
  /** Give up on a file after this many milliseconds without finishing (default 10 minutes). */
  timeoutMs?: number;
  /** Byte progress per file (total is null when the server does not say). */
  onProgress?: (file: string, received: number, total: number | null) => void;
  /** The fetch to use (tests pass a fake). */
  fetch?: typeof fetch;
}

/** Why a download failed, in words a user can act on. */
function describeFetchError(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timed out';
  const code = e?.cause?.code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `cannot resolve the host, ${code}: offline?`;
  if (code === 'ECONNREFUSED' || code === 'ENETUNREACH' || code === 'EHOSTUNREACH')
    return `cannot connect, ${code}: offline?`;
  return e?.cause?.message ?? e?.message ?? String(err);
}

/**
 * Download a data set from its public home into the cache folder, laid out as the loaders
 * expect (`<cache>/gsm8k/test.jsonl`, …). Each file is written to a temporary name and renamed
 * when complete. Offline or on an HTTP error it throws a {@link StepwiseError} that says what
 * failed and where to put the files by hand.
 */
export async function pullDataset(
  name: DatasetName,
  options: PullOptions = {},
): Promise<{ files: string[] }> {
  const source = PULL_SOURCES[name];
  if (!source) {
    const hint =
      name === 'math'
        ? 'the full MATH test set has no single-file public home: get it from https://github.com/hendrycks/math, convert it to JSONL ({problem, solution, level, type}) and pass --path, or pull math500'
        : 'a jsonl file is your own: pass --path';
    throw new UsageError(`cannot pull ${name}: ${hint}`);
  }
  if (options.split !== undefined && !source.splits.includes(options.split))
    throw new UsageError(`unknown ${name} split "${options.split}" (expected ${source.splits.join(', ')})`);
  const splits = options.split !== undefined ? [options.split] : source.defaults;
  const dest = options.dest ?? dataCacheDir();
  const doFetch = options.fetch ?? fetch;
  const files: string[] = [];
  for (const split of splits) {
    const { url, file } = source.file(split);
    const target = join(dest, file);
    const partial = `${target}.part`;
    try {
      const response = await doFetch(url, { signal: AbortSignal.timeout(options.timeoutMs ?? 600_000) });
      if (!response.ok || !response.body)
        throw new StepwiseError(`HTTP ${response.status} ${response.statusText}`.trim());
      mkdirSync(dirname(target), { recursive: true });
      const length = response.headers.get('content-length');
      const total = length === null ? null : Number(length);
      let received = 0;
      let head = '';
      const counter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          if (head.length < 64) head += chunk.toString('utf8', 0, 64);
          received += chunk.length;
          options.onProgress?.(file, received, total);
          done(null, chunk);
        },
      });
      await pipeline(
        Readable.fromWeb(response.body as import('node:stream/web').ReadableStream),
        counter,
        createWriteStream(partial),
      );
      if (head.startsWith('version https://git-lfs'))
        throw new StepwiseError('the server sent a Git LFS pointer, not the data');
      renameSync(partial, target);
      files.push(target);
    } catch (err) {
      rmSync(partial, { force: true });
      const why = err instanceof StepwiseError ? err.message : describeFetchError(err);
      throw new StepwiseError(
        `could not download ${name} from ${url} (${why}). Without internet, fetch it from ${source.home} elsewhere and place it at ${target} (or pass --path to the loaders).`,
      );
    }
  }
  return { files };
}
