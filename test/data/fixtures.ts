import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '../support/temp.js';

/** A fresh temporary folder holding `files` (relative path → content). */
export function fixtureDir(files: Record<string, string | Buffer>): string {
  const dir = tempDir('stepwise-data-');
  for (const [name, content] of Object.entries(files)) {
    const p = join(dir, name);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
  }
  return dir;
}

/** JSONL text from objects (one per line). */
export function jsonl(rows: unknown[]): string {
  return `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
}

export function processBenchRow(i: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: `gsm8k-${i}`,
    generator: 'Qwen2-7B-Instruct',
    problem: `What is ${i} + 1?`,
    steps: [`We add 1 to ${i}.`, `So the answer is ${i + 1}.`],
    final_answer_correct: true,
    label: -1,
    ...over,
  };
}

/** A PRM800K labelling row in the published schema (two chosen steps, one human step, a stop). */
export function prm800kRow(ratings: Array<-1 | 0 | 1>): Record<string, unknown> {
  return {
    labeler: 'l-1',
    timestamp: '2022-07-30T23:23:32',
    generation: null,
    is_quality_control_question: false,
    is_initial_screening_question: false,
    question: { problem: 'Compute 2+2.', ground_truth_answer: '4' },
    label: {
      steps: [
        ...ratings.map((rating, i) => ({
          completions: [
            { text: `alt ${i}`, rating: -1, flagged: false },
            { text: `step ${i}`, rating, flagged: false },
          ],
          human_completion: null,
          chosen_completion: 1,
        })),
        {
          completions: [{ text: 'wrong turn', rating: -1, flagged: false }],
          human_completion: { text: 'human step', rating: null, source: 'human', flagged: false },
          chosen_completion: null,
        },
        {
          completions: [{ text: 'final mistake', rating: -1, flagged: false }],
          human_completion: null,
          chosen_completion: null,
        },
      ],
      total_time: 1000,
      finish_reason: 'found_error',
    },
  };
}
