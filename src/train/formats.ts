import type { z } from 'zod';
import { UsageError } from '../core/errors.js';
import type { MathShepherdRowSchema, TrlStepwiseRowSchema } from '../data/record-kinds.js';
import { softThresholdOf } from '../label/signals.js';
import { type ChatTemplate, continueAssistantTurn } from '../prompts/chat-template.js';
import { SHEPHERD_TAG } from '../prompts/prm.js';
import { chunkLabel, type LabeledSolution } from './label-file.js';
import type { SftPair } from './sft.js';

/** TRL stepwise supervision row (PRMTrainer, now `trl.experimental.prm`): `completions` and `labels` have equal lengths. */
export type TrlStepwiseRow = Omit<z.input<typeof TrlStepwiseRowSchema>, 'id' | 'simulated'>;

/** Math-Shepherd row: steps end with `ки` in `input`; `label` has `+`/`-` at the same places. */
export type MathShepherdRow = Omit<z.input<typeof MathShepherdRowSchema>, 'simulated'>;

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

/**
 * An OpenRLHF SFT row (`--input_key` / `--output_key`, default `prompt` / `response`). OpenRLHF's
 * `preprocess_data` (openrlhf/datasets/sft_dataset.py) takes prompt and response both as strings
 * or, only with `--apply_chat_template`, both as message lists; a list beside a string fails. So
 * both are strings, which it reads in either mode:
 * - a one-user-message prompt is that message's text: with `--apply_chat_template` OpenRLHF wraps
 *   the two strings as the user and the assistant turn, i.e. exactly our conversation;
 * - with `template` (a prompt that ends in an assistant prefix needs one), the prompt is the text
 *   the model's own template renders up to and including the prefix and the response the
 *   continuation: train such rows without `--apply_chat_template`, the text is already templated.
 */
export function toOpenRlhfSft(
  p: SftPair,
  keys: { promptKey: string; labelKey: string },
  template?: ChatTemplate,
): Record<string, string> {
  const last = p.prompt[p.prompt.length - 1];
  let prompt: string;
  if (template) {
    const hasPrefix = last?.role === 'assistant';
    prompt = continueAssistantTurn(
      template,
      hasPrefix ? p.prompt.slice(0, -1) : p.prompt,
      hasPrefix ? last.content : '',
    );
  } else if (p.prompt.length === 1 && last.role === 'user') prompt = last.content;
  else
    throw new UsageError(
      `${p.id}: the prompt is ${p.prompt.map((m) => m.role).join(' + ')} messages, which OpenRLHF cannot take beside a text ` +
        "response: pass --chat-template FILE (the model's tokenizer_config.json or .jinja) to render it",
    );
  return { id: p.id, [keys.promptKey]: prompt, [keys.labelKey]: p.completion };
}
