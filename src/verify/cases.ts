import { readFileSync } from 'node:fs';
import { InputError } from '../core/errors.js';
import { detectFileKind, FILE_KIND_NAMES, wrongKindError } from '../core/file-kind.js';
import { type EquivalenceOptions, isEquivalent } from './equivalence.js';
import { extractAnswer } from './extract.js';

/** One labelled answer pair in the ../shared/eval/answer-equiv JSONL format. */
export interface EquivalenceCase {
  id: string;
  gold: string;
  pred: string;
  equal: boolean;
  kind: string;
  /** For `kind: "extract"`: which side is a full solution text. Default `pred`. */
  extractSide?: 'pred' | 'gold' | 'both';
}

/** Agreement of the checker with a labelled case file. */
export interface EquivalenceCaseReport {
  total: number;
  agree: number;
  /** Cases labelled unequal that the checker called equal. */
  falsePositives: number;
  /** Cases labelled equal that the checker called unequal. */
  falseNegatives: number;
  byKind: Record<string, { agree: number; total: number }>;
  disagreements: Array<{ id: string; kind: string; expected: boolean; gold: string; pred: string }>;
  elapsedMs: number;
  comparisonsPerSecond: number;
}

/** Read a case file; a bad line throws {@link InputError} naming file, line and field. */
export function loadEquivalenceCases(path: string): EquivalenceCase[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new InputError({ file: path }, `cannot read: ${(err as Error).message}`);
  }
  const out: EquivalenceCase[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let raw: Record<string, unknown>;
    try {
      raw = JSON.parse(line) as Record<string, unknown>;
    } catch {
      if (out.length === 0 && line.trim().startsWith('[')) throw jsonArrayError(path, text);
      throw new InputError({ file: path, line: i + 1 }, 'not valid JSON');
    }
    if (out.length === 0 && Array.isArray(raw)) throw jsonArrayError(path, text);
    const wrong = wrongKindError({ file: path, line: i + 1 }, raw, ['verify-cases'], 'verify --cases', {
      strict: false,
    });
    if (wrong) throw wrong;
    for (const field of ['gold', 'pred'] as const) {
      if (typeof raw[field] !== 'string')
        throw new InputError({ file: path, line: i + 1, field }, 'must be a string');
    }
    if (typeof raw.equal !== 'boolean')
      throw new InputError({ file: path, line: i + 1, field: 'equal' }, 'must be true or false');
    const side = raw.extract_side;
    out.push({
      id: typeof raw.id === 'string' ? raw.id : `${path}:${i + 1}`,
      gold: raw.gold as string,
      pred: raw.pred as string,
      equal: raw.equal,
      kind: typeof raw.kind === 'string' ? raw.kind : 'unknown',
      extractSide: side === 'gold' || side === 'both' || side === 'pred' ? side : undefined,
    });
  });
  return out;
}

/** The checker's verdict on one case: extraction on the side(s) named, then equivalence. */
export function judgeEquivalenceCase(c: EquivalenceCase, options?: EquivalenceOptions): boolean {
  let gold: string | null = c.gold;
  let pred: string | null = c.pred;
  if (c.kind === 'extract') {
    const side = c.extractSide ?? 'pred';
    if (side === 'pred' || side === 'both') pred = extractAnswer(pred);
    if (side === 'gold' || side === 'both') gold = extractAnswer(gold);
    if (gold === null || pred === null) return false;
  }
  return isEquivalent(gold, pred, options);
}

/** Run the checker over labelled cases and count agreement, false positives and false negatives. */
export function scoreEquivalenceCases(
  cases: EquivalenceCase[],
  options?: EquivalenceOptions,
  onProgress?: (done: number, total: number) => void,
): EquivalenceCaseReport {
  const started = performance.now();
  const report: EquivalenceCaseReport = {
    total: cases.length,
    agree: 0,
    falsePositives: 0,
    falseNegatives: 0,
    byKind: {},
    disagreements: [],
    elapsedMs: 0,
    comparisonsPerSecond: 0,
  };
  cases.forEach((c, i) => {
    const got = judgeEquivalenceCase(c, options);
    const kind = report.byKind[c.kind] ?? { agree: 0, total: 0 };
    report.byKind[c.kind] = kind;
    kind.total++;
    if (got === c.equal) {
      report.agree++;
      kind.agree++;
    } else {
      if (got) report.falsePositives++;
      else report.falseNegatives++;
      report.disagreements.push({ id: c.id, kind: c.kind, expected: c.equal, gold: c.gold, pred: c.pred });
    }
    onProgress?.(i + 1, cases.length);
  });
  report.elapsedMs = Math.round((performance.now() - started) * 10) / 10;
  report.comparisonsPerSecond =
    report.elapsedMs > 0 ? Math.round((cases.length / report.elapsedMs) * 1000 * 10) / 10 : 0;
  return report;
}

/** A JSON array where one case per line is read (ProcessBench's `<subset>.json`): what it is, not "not valid JSON". */
function jsonArrayError(path: string, text: string): InputError {
  let holds = '';
  try {
    const parsed: unknown = JSON.parse(text);
    const kind = Array.isArray(parsed) ? detectFileKind(parsed[0]) : undefined;
    if (kind) holds = ` holding ${FILE_KIND_NAMES[kind]}`;
  } catch {
    // Not a whole JSON array either.
  }
  return new InputError(
    { file: path, line: 1 },
    `a JSON array${holds}, not JSONL (one case per line); convert it with: jq -c '.[]' FILE > FILE.jsonl`,
  );
}
