import { softThresholdOf } from '../label/signals.js';
import { SHEPHERD_TAG } from '../prompts/prm.js';
import { chunkLabel, type LabeledSolution } from './label-file.js';

/** TRL stepwise supervision row (PRMTrainer): `completions` and `labels` have equal lengths. */
export interface TrlStepwiseRow {
  prompt: string;
  completions: string[];
  labels: boolean[];
}

/** Math-Shepherd row: steps end with `ки` in `input`; `label` has `+`/`-` at the same places. */
export interface MathShepherdRow {
  input: string;
  label: string;
  task: string;
}

/**
 * Steps and their labels under `signal`. Chunks without a label for the signal end the list
 * (labels after an unlabeled chunk cannot be trusted to line up).
 */
export function labeledSteps(row: LabeledSolution, signal: string): { steps: string[]; labels: boolean[] } {
  const steps: string[] = [];
  const labels: boolean[] = [];
  // Soft labels become verdicts at the threshold the row was labelled with.
  const softThreshold = softThresholdOf(row);
  for (const c of row.chunks) {
    const l = chunkLabel(c, signal, softThreshold);
    if (l === null) break;
    steps.push(c.text);
    labels.push(l);
  }
  return { steps, labels };
}

export function toTrlStepwise(row: LabeledSolution, signal: string): TrlStepwiseRow {
  const { steps, labels } = labeledSteps(row, signal);
  return { prompt: row.problem, completions: steps, labels };
}

/**
 * Math-Shepherd format: `problem Step 1: … ки\nStep 2: … ки` and the same text with each tag
 * replaced by `+` or `-`. A tag inside a step's own text would break the alignment, so it is
 * replaced by a space there.
 */
export function toMathShepherd(row: LabeledSolution, signal: string, task = 'stepwise'): MathShepherdRow {
  const { steps, labels } = labeledSteps(row, signal);
  const clean = (s: string) => s.split(SHEPHERD_TAG).join(' ');
  // Steps are numbered by position; a step's own `Step k:` marker is dropped so it is not numbered twice.
  const parts = steps.map((s, i) => `Step ${i + 1}: ${clean(s).replace(/^\s*Step \d+\s*[:.]\s*/, '')} `);
  const input = `${clean(row.problem)} ${parts.map((p) => `${p}${SHEPHERD_TAG}`).join('\n')}`;
  const label = `${clean(row.problem)} ${parts.map((p, i) => `${p}${labels[i] ? '+' : '-'}`).join('\n')}`;
  return { input, label, task };
}

/**
 * SORM labels (GLoRe): a prefix is positive when some rollout from it reaches the right answer, and
 * every prefix before a positive one is positive too (backward propagation).
 */
export function propagateBackward(labels: readonly boolean[]): boolean[] {
  const out = labels.slice();
  for (let i = out.length - 2; i >= 0; i--) if (out[i + 1]) out[i] = true;
  return out;
}
