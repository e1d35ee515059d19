import { z } from 'zod';
import { UsageError } from '../core/errors.js';
import { detectFileKind, FILE_KIND_NAMES } from '../core/file-kind.js';
import type { Problem } from '../core/types.js';
import { splitFromFile } from './gsm8k.js';
import { resolveDataPath } from './locate.js';
import { loadSource, RecordProblem, type RecordSource, recordStream } from './records.js';
import type { FieldMapping, Loaded, LoadOptions } from './types.js';

/** The value at a dotted path (`meta.gold`) of a record, or undefined. */
function getField(record: Record<string, unknown>, path: string): unknown {
  let value: unknown = record;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * Parse a field mapping written `question=problem,answer=gold,id=uid` (the CLI's `--fields`).
 * Keys are `id`, `question`, `answer`.
 */
export function parseFieldMapping(spec: string): FieldMapping {
  const mapping: FieldMapping = {};
  for (const pair of spec.split(',')) {
    if (pair.trim() === '') continue;
    const [key, field] = pair.split('=').map((s) => s.trim());
    if ((key !== 'id' && key !== 'question' && key !== 'answer') || !field)
      throw new UsageError(
        `bad field mapping "${pair}": expected id=<field>, question=<field> or answer=<field>`,
      );
    mapping[key] = field;
  }
  return mapping;
}

/**
 * Any JSONL (or JSON array) file of problems, read through a field mapping (default `id`,
 * `question`, `answer`). The question must be a non-empty string, the answer a string or number
 * (numbers become strings; the answer is kept as written). Other fields go to `meta`.
 * Ids default to `<file name>/<n>`. `source` is the file's name.
 */
export async function loadJsonlProblems(options: LoadOptions = {}): Promise<Loaded<Problem>> {
  return loadSource(jsonlProblemSource(options));
}

/** {@link loadJsonlProblems}'s problems, read one at a time (a line at a time for JSONL). */
export function jsonlProblemSource(options: LoadOptions = {}): RecordSource<Problem> {
  if (options.path === undefined) throw new UsageError('the jsonl loader needs a path (--path FILE)');
  const path = resolveDataPath('jsonl', options.path, '', []);
  const fields = {
    id: options.fields?.id ?? 'id',
    question: options.fields?.question ?? 'question',
    answer: options.fields?.answer ?? 'answer',
  };
  const domain = options.domain ?? 'math';
  const source = splitFromFile(path);
  const read: RecordSource<Problem>['read'] = (hooks) =>
    recordStream(
      path,
      z.record(z.string(), z.unknown()),
      (row, raw): Problem => {
        const question = getField(row, fields.question);
        const questionBad = typeof question !== 'string' || question.trim() === '';
        const answerValue = getField(row, fields.answer);
        const answerBad = typeof answerValue !== 'string' && typeof answerValue !== 'number';
        // Another stepwise output given as a data set: say what it is (unless --fields maps it).
        const kind = (questionBad || answerBad) && !options.fields ? detectFileKind(row) : undefined;
        if (kind !== undefined && kind !== 'problems')
          throw new RecordProblem(
            questionBad ? fields.question : fields.answer,
            `this is ${FILE_KIND_NAMES[kind]}; --dataset jsonl needs ${FILE_KIND_NAMES.problems} (or --fields to map them)`,
          );
        if (typeof question !== 'string' || question.trim() === '')
          throw new RecordProblem(fields.question, `expected a non-empty string, got ${describe(question)}`);
        const answer = getField(row, fields.answer);
        if (typeof answer !== 'string' && typeof answer !== 'number')
          throw new RecordProblem(fields.answer, `expected a string or number, got ${describe(answer)}`);
        const id = getField(row, fields.id);
        if (id !== undefined && typeof id !== 'string' && typeof id !== 'number')
          throw new RecordProblem(fields.id, `expected a string or number, got ${describe(id)}`);
        const meta: Record<string, unknown> = {};
        const top = new Set([fields.id, fields.question, fields.answer]);
        for (const [k, v] of Object.entries(row)) if (!top.has(k)) meta[k] = v;
        return {
          id: id === undefined ? `${source}/${raw.ordinal}` : String(id),
          question,
          answer: String(answer),
          domain,
          source,
          meta,
        };
      },
      { ...options, ...hooks },
    );
  return { path, read };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing (field missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? 'an empty string' : `a ${typeof value}`;
}
