import { InputError } from './errors.js';

/**
 * What a JSONL record is, told from its fields, so a command given a file of the wrong kind says
 * what the file is and what it needs instead of a schema error ("field "problem": expected
 * string").
 */
export type FileKind =
  | 'sample'
  | 'label'
  | 'search'
  | 'select'
  | 'processbench'
  | 'trl-stepwise'
  | 'segment'
  | 'predictions'
  | 'chunk-judgments'
  | 'verl'
  | 'batch-input'
  | 'batch-output'
  | 'verify-cases'
  | 'problems'
  | 'solutions'
  | 'texts';

/** How each kind is named in messages. */
export const FILE_KIND_NAMES: Readonly<Record<FileKind, string>> = {
  sample: '`stepwise sample` output',
  label: '`stepwise label` output',
  search: '`stepwise search` output',
  select: '`stepwise select` output',
  processbench:
    'ProcessBench-format rows (ProcessBench, `label --format processbench`, `sim dataset --processbench`)',
  'trl-stepwise': 'TRL stepwise rows (`stepwise label-code` or `export --format trl`)',
  segment: '`stepwise segment --segmentation llm` output',
  predictions: 'ProcessBench predictions ({id, prediction})',
  'chunk-judgments': '`eval chunks` per-chunk rows ({solution, chunk, verdict, label})',
  verl: '`stepwise export --format verl` rows',
  'batch-input': 'an OpenAI Batch API input file (`label --batch-out`)',
  'batch-output': 'an OpenAI Batch API output file (results of `label --batch-out`)',
  'verify-cases': 'a `verify --cases` file ({gold, pred, equal})',
  problems: 'problem rows of a data set ({id, question, answer})',
  solutions: 'solution rows ({id, problem, answer, steps})',
  texts: 'solution texts ({id, text, problem?})',
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The kind of one parsed JSONL record, or undefined when it is none stepwise knows. */
export function detectFileKind(value: unknown): FileKind | undefined {
  if (!isObject(value)) return undefined;
  const v = value;
  const has = (k: string): boolean => k in v;
  if (typeof v.custom_id === 'string')
    return has('response') || has('error') ? 'batch-output' : 'batch-input';
  if (Array.isArray(v.samples)) return 'sample';
  if (Array.isArray(v.chunks)) {
    const first = v.chunks[0];
    if (has('firstError') || has('q0') || (isObject(first) && isObject(first.labels))) return 'label';
    if (typeof v.strategy === 'string') return 'search';
    if (v.method === 'llm' || v.method === 'paragraph' || has('rejected')) return 'segment';
  }
  if (typeof v.strategy === 'string' && (has('finalText') || has('trace') || has('cost'))) return 'search';
  // A search result wrapped with its problem (`{problem, result: {trace, …}}`).
  if (isObject(v.result) && Array.isArray(v.result.trace)) return 'search';
  // `eval chunks` per-chunk rows: the judge's verdict beside the rollout label and Q̂.
  if (typeof v.solution === 'string' && typeof v.chunk === 'number' && has('verdict') && has('label'))
    return 'chunk-judgments';
  if (has('chosen') && has('outcomeOnly')) return 'select';
  if (Array.isArray(v.steps) && typeof v.label === 'number') return 'processbench';
  if (Array.isArray(v.completions) && Array.isArray(v.labels)) return 'trl-stepwise';
  if (has('data_source') && has('reward_model')) return 'verl';
  if (has('gold') && has('pred') && has('equal')) return 'verify-cases';
  // `{id, prediction}`, bare or as `eval processbench` writes it (with the judge's scores, cost, …).
  if (has('id') && has('prediction')) return 'predictions';
  if (Array.isArray(v.steps) && (has('problem') || has('question'))) return 'solutions';
  if (typeof v.text === 'string' && has('id')) return 'texts';
  if ((has('question') || has('problem')) && has('answer')) return 'problems';
  return undefined;
}

/** Kinds told only by common field names: a bad record of the right kind can look like them. */
export const LOOSE_KINDS: readonly FileKind[] = ['problems', 'texts', 'solutions'];

/**
 * When a record that failed `who`'s schema is of a known other kind, the error that says so
 * (naming file and line); otherwise undefined and the caller reports the schema error. A check
 * made before the schema (`strict: false`) passes the loose kinds on to the field errors.
 */
export function wrongKindError(
  where: { file: string; line?: number },
  value: unknown,
  needs: readonly FileKind[],
  who: string,
  options: { strict?: boolean } = {},
): InputError | undefined {
  const kind = detectFileKind(value);
  if (kind === undefined || needs.includes(kind)) return undefined;
  if (options.strict === false && LOOSE_KINDS.includes(kind)) return undefined;
  const wanted = needs.map((k) => FILE_KIND_NAMES[k]).join(' or ');
  return new InputError(where, `this is ${FILE_KIND_NAMES[kind]}; ${who} needs ${wanted}`);
}
