import type { ChatTemplate } from '../prompts/chat-template.js';
import type { JudgeRlExample } from './judge-rl.js';
import type { LabeledSolution } from './label-file.js';
import type { SftPair } from './sft.js';

/**
 * The neutral records between the two halves of `stepwise export`: a task exporter
 * (./export-tasks.ts) turns label, sample or segment rows into records of one of these kinds; a
 * format (./export-formats.ts) maps each record to its engine's row. Neither knows the other: a
 * task can be written in every format that has a mapper for its kind.
 */
export interface ExportRecords {
  /** One chunk for the judge to rule on, with the verdict it is rewarded for (judge-rl). */
  judgment: JudgeRlExample;
  /** A solution, or a prefix of one, whose steps are trained under `signal` (prm, sorm). */
  steps: { solution: LabeledSolution; signal: string };
  /** A supervised pair: prompt messages → the completion (selfseg, refine-global). */
  sft: SftPair;
  /**
   * A pair whose prompt ends with the assistant's own good prefix, trained as the continuation of
   * that turn (refine-local): written as text the model's chat template renders, since a message
   * list would open a new assistant turn after the prefix.
   */
  continuation: SftPair;
}

export type ExportRecordKind = keyof ExportRecords;

/** The run's settings a format reads when it names or fills its columns. */
export interface RowContext {
  task: string;
  /** OpenRLHF's `--input_key` / `--label_key` (for SFT records the label key holds the target). */
  promptKey?: string;
  labelKey?: string;
  /** verl `data_source` (default `stepwise/<task>`) and `extra_info.split` (default `train`). */
  dataSource?: string;
  split?: string;
  /** The model's own chat template (continuation records are rendered with it). */
  chatTemplate?: ChatTemplate;
}
