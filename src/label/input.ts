import { InputError, UsageError } from '../core/errors.js';
import { wrongKindError } from '../core/file-kind.js';
import { type Segmentation, splitParagraphs, splitWritten } from '../core/segment.js';
import type { Domain, Problem } from '../core/types.js';
import { LabelInputRowSchema, missingGold, missingProblem, parseRecord } from '../data/record-kinds.js';
import { streamJsonl } from '../jobs/lines.js';
import type { SolutionToLabel } from './label.js';

/**
 * The inputs `stepwise label` accepts, one JSON object per line:
 * - rows `{id, problem, answer, steps: string[]}` (ProcessBench-like, plus the gold answer);
 *   `question` may stand for `problem`;
 * - the output of `stepwise sample`: `{id, question|problem, answer, samples: [{text, correct?,
 *   chunks?}], segmentation?}` — each sample becomes its own solution with id `<problemId>#<k>`.
 *   A sample's chunks are its `chunks` (strings or `{text}`), else its text split on blank lines.
 *   Under `segmentation: "tags"` the chunks are the policy's own `<chunk>`s, read from its text,
 *   and the text is kept so prefixes are exactly what the policy wrote (a sample whose tags were
 *   malformed is labeled by the paragraphs of its tag-free text).
 * The gold answer may also sit under `gold`, and the problem may be a `Problem` object.
 */

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/** Chunk texts from strings or `{text}` objects (their shape checked by the row's schema). */
function chunkTexts(v: ReadonlyArray<string | number | { text: string | number }>): string[] {
  return v.map((c) => String(typeof c === 'object' ? c.text : c));
}

export interface LabelInputOptions {
  /**
   * The `--segmentation` asked for, if any: a file whose records say they were sampled under
   * another one is refused (its chunks and prefixes would not match the job's).
   */
  segmentation?: Segmentation;
  /**
   * Problems by id, for records that carry only an id (the `stepwise sample` output holds id,
   * gold and samples, not the question): the question, domain and gold answer come from here.
   */
  problems?: ReadonlyMap<string, Problem>;
}

/**
 * The segmentation the input's first record declares (`stepwise sample` writes one on every
 * record), undefined when it declares none. Later records that disagree are refused while
 * streaming (see {@link LabelInputOptions.segmentation}).
 */
export function labelInputSegmentation(file: string): Segmentation | undefined {
  for (const { value } of streamJsonl(file)) {
    const v = isObj(value) ? value.segmentation : undefined;
    return v === 'tags' || v === 'paragraph' ? v : undefined;
  }
  return undefined;
}

/** Read the solutions to label from `file`; throws an InputError naming the line and field. */
export function readLabelInput(file: string, options: LabelInputOptions = {}): SolutionToLabel[] {
  return [...streamLabelInput(file, options)];
}

/**
 * The solutions to label from `file`, one at a time as the file is read (memory holds one line
 * and the set of ids seen, for the duplicate check). Throws an InputError naming the line and
 * field when it reaches a bad record.
 */
export function* streamLabelInput(file: string, options: LabelInputOptions = {}): Generator<SolutionToLabel> {
  const seen = new Set<string>();
  let declared: Segmentation | undefined = options.segmentation;
  let declaredBy = options.segmentation !== undefined ? '--segmentation' : '';
  for (const { line, value } of streamJsonl(file)) {
    const out: SolutionToLabel[] = [];
    const err = (field: string, problem: string) => new InputError({ file, line, field }, problem);
    const wrong = wrongKindError({ file, line }, value, ['sample', 'solutions', 'processbench'], 'label', {
      strict: false,
    });
    if (wrong) throw wrong;
    if (!isObj(value)) throw new InputError({ file, line }, 'expected a JSON object');
    // The row's shape (fields and their types) is its kind's schema; what follows checks what a
    // schema cannot: the data-set lookup, duplicate ids, one segmentation across the file.
    const row = parseRecord(LabelInputRowSchema, { file, line }, value);
    let mode: Segmentation | undefined;
    if (row.segmentation !== undefined) {
      mode = row.segmentation;
      if (declared !== undefined && mode !== declared)
        throw err(
          'segmentation',
          `sampled with --segmentation ${mode}, but ${declaredBy} says ${declared}: label a file with the segmentation it was sampled with`,
        );
      if (declared === undefined) {
        declared = mode;
        declaredBy = `line ${line}`;
      }
    }
    const id = String(row.id);
    const known = options.problems?.get(id);
    // The problem's fields come from the row's own problem object, else from the data set by id.
    const p: Obj | undefined = isObj(row.problem) ? row.problem : (known as Obj | undefined);
    const question = str(p ? p.question : (row.problem ?? row.question));
    if (question === undefined) throw err('problem', missingProblem);
    const answer = str(row.answer ?? row.gold ?? p?.answer);
    if (answer === undefined || answer.trim() === '') throw err('answer', missingGold);
    const domain: Domain = (p?.domain ?? row.domain) === 'code' ? 'code' : 'math';
    const meta = isObj(p?.meta) ? p.meta : isObj(row.meta) ? row.meta : undefined;
    const problem: Problem = {
      id: str(p?.id) ?? id,
      question,
      answer,
      domain,
      source: str(p?.source ?? row.source) ?? 'input',
      ...(meta ? { meta } : {}),
    };
    const add = (s: SolutionToLabel) => {
      if (seen.has(s.id)) throw err('id', `duplicate solution id "${s.id}"`);
      seen.add(s.id);
      out.push(s);
    };
    if (row.samples !== undefined) {
      row.samples.forEach((sample, k) => {
        const field = `samples.${k}`;
        let chunks: string[];
        if (mode === 'tags') {
          const text = str(sample.text);
          if (text === undefined) throw err(`${field}.text`, 'missing sample text');
          const split = splitWritten(text, 'tags');
          add({
            id: `${id}#${k}`,
            problem,
            chunks: split.chunks.map((c) => c.text),
            segmentation: split.method,
            ...(split.method === 'tags' ? { written: { text, ends: split.ends } } : {}),
            ...(typeof sample.correct === 'boolean' ? { correct: sample.correct } : {}),
          });
          return;
        }
        // Without chunks the row's schema has made sure of a text (its refine names samples.<k>.text).
        if (sample.chunks !== undefined && sample.chunks.length > 0) chunks = chunkTexts(sample.chunks);
        else chunks = splitParagraphs(String(sample.text)).map((c) => c.text);
        add({
          id: `${id}#${k}`,
          problem,
          chunks,
          ...(mode ? { segmentation: mode } : {}),
          ...(typeof sample.correct === 'boolean' ? { correct: sample.correct } : {}),
        });
      });
      yield* out;
      continue;
    }
    if (row.steps === undefined) throw err('steps', 'missing "steps" (a list of step texts) or "samples"');
    const steps = chunkTexts(row.steps);
    const correct = row.final_answer_correct ?? row.correct;
    add({ id, problem, chunks: steps, ...(typeof correct === 'boolean' ? { correct } : {}) });
    yield* out;
  }
}

/** A label job's input, opened: the solutions as a stream, and a second pass over them (the job's plan). */
export interface OpenedLabelInput {
  solutions: Iterable<SolutionToLabel>;
  /** The same solutions again: a first pass counts the prefixes (progress) and finds rows whose input changed. */
  plan: Iterable<SolutionToLabel>;
}

/**
 * Open `file` for a label job: read as the job proceeds (only its first record is looked at now);
 * `check` sees the first solution at once and every other one as the stream reaches it (a
 * simulated policy refuses problems outside its world). An empty file is a usage error.
 */
export function openLabelInput(
  file: string,
  options: LabelInputOptions & { check?: (s: SolutionToLabel) => void } = {},
): OpenedLabelInput {
  const first = streamJsonl(file).next();
  if (first.done) throw new UsageError(`${file}: no solutions to label`);
  const check = options.check ?? (() => {});
  const peek = streamLabelInput(file, options);
  const firstSolution = peek.next();
  peek.return(undefined);
  if (!firstSolution.done) check(firstSolution.value);
  function* checked(): Generator<SolutionToLabel> {
    for (const s of streamLabelInput(file, options)) {
      check(s);
      yield s;
    }
  }
  return { solutions: checked(), plan: checked() };
}
