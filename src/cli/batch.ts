import type { Command } from 'commander';
import { StepwiseError, UsageError } from '../core/errors.js';
import { BatchFiles, loadBatchResults } from '../models/batch.js';
import { openStore } from '../store/db.js';

/** `--batch-out FILE` / `--batch-in FILE` of a job whose model requests can go through batch files. */
export interface BatchFlags {
  batchOut?: string;
  batchIn?: string;
}

/** Add `--batch-out` and `--batch-in` (`what`: whose requests, e.g. "the judge's"). */
export function addBatchOptions(cmd: Command, what: string): Command {
  return cmd
    .option(
      '--batch-out <file>',
      `write ${what} requests still unanswered as an OpenAI Batch API input file (for \`vllm run-batch\`) instead of sending them`,
    )
    .option(
      '--batch-in <file>',
      'answers from a Batch API output file (the results of --batch-out); nothing is sent online',
    );
}

/**
 * The batch side of a job, or undefined without the flags: `--batch-in` answers are loaded into
 * the store (a line at a time), `--batch-out` is opened for the requests still unanswered.
 */
export function openBatchFiles(
  flags: BatchFlags & { cache?: boolean },
  storePath: string | undefined,
): BatchFiles | undefined {
  if (flags.batchOut === undefined && flags.batchIn === undefined) return undefined;
  if (flags.cache === false)
    throw new UsageError('--batch-out / --batch-in pass answers through the model cache: drop --no-cache');
  const store = openStore(storePath);
  if (flags.batchIn !== undefined) {
    const loaded = loadBatchResults(store, flags.batchIn);
    process.stderr.write(
      `read ${loaded.loaded} answers from ${flags.batchIn}${
        loaded.failed
          ? `; ${loaded.failed} requests failed there (e.g. ${loaded.firstError}) and stay pending`
          : ''
      }\n`,
    );
  }
  return new BatchFiles(store, flags.batchOut);
}

/**
 * After a run with batch files: with items left and no `--batch-out` to write their requests,
 * the run cannot finish (an Error to throw, exit 1); with `--batch-out`, what to run next.
 */
export function batchOutcome(
  flags: BatchFlags,
  batch: BatchFiles,
  o: { pending: number; unit: string; modelId: string; chat: boolean; rounds?: string },
): Error | undefined {
  if (o.pending > 0 && flags.batchOut === undefined)
    return new StepwiseError(
      `${o.pending} ${o.unit} need ${batch.missing} requests that ${flags.batchIn} does not answer: ` +
        `rerun with --batch-out FILE to write them for the next round (finished ${o.unit} are kept)`,
    );
  if (flags.batchOut === undefined) return undefined;
  const out = flags.batchOut;
  if (batch.written === 0) {
    process.stderr.write(`${out}: no request pending — the job is complete\n`);
    return undefined;
  }
  const results = out.replace(/(\.jsonl)?$/, '.results.jsonl');
  process.stderr.write(
    [
      `wrote ${batch.written} requests for ${o.pending} unfinished ${o.unit} to ${out} (OpenAI Batch API input, url ${
        o.chat ? '/v1/chat/completions' : '/v1/completions'
      }).`,
      'Next:',
      // vllm run-batch reads chat, embeddings, score and rerank bodies only (vllm/entrypoints/openai/
      // run_batch.py, BatchRequestInputBody): a /v1/completions file is not one to hand it.
      ...(o.chat
        ? [
            `  1. run them, e.g. on a GPU node: vllm run-batch -i ${out} -o ${results} --model <weights> --served-model-name ${o.modelId}`,
          ]
        : [
            `  1. run them with a Batch API that takes /v1/completions bodies (OpenAI's does), writing ${results};`,
            '     vllm run-batch does not (it takes /v1/chat/completions, embeddings, score and rerank bodies only):',
            '     for vLLM, write the file again with --prompt-form chat',
          ]),
      `  2. rerun this command with --batch-in ${results}${o.rounds ? ` ${o.rounds}` : ''}`,
      '  See docs/scale.md.',
    ].join('\n') + '\n',
  );
  return undefined;
}

/** The `batch` field of a job's JSON summary: what `--batch-in` answered and what `--batch-out` wrote. */
export function batchReport(
  flags: BatchFlags,
  batch: BatchFiles,
): { in?: string; answered?: number; out?: string; requests?: number } {
  return {
    ...(flags.batchIn !== undefined ? { in: flags.batchIn, answered: batch.answered } : {}),
    ...(flags.batchOut !== undefined ? { out: flags.batchOut, requests: batch.written } : {}),
  };
}

/** The batch file of the next round: `x.jsonl` → `x.round2.jsonl`, `x.round2.jsonl` → `x.round3.jsonl`. */
export function nextRoundFile(file: string): string {
  const m = /^(.*)\.round(\d+)(\.[^./]*)?$/.exec(file);
  if (m) return `${m[1]}.round${Number(m[2]) + 1}${m[3] ?? ''}`;
  const dot = file.lastIndexOf('.');
  return dot > file.lastIndexOf('/') ? `${file.slice(0, dot)}.round2${file.slice(dot)}` : `${file}.round2`;
}
