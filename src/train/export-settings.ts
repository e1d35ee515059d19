import { z } from 'zod';
import { seedSetting, setting } from '../core/settings-schema.js';
import { EXPORT_FORMAT_SPECS, EXPORT_FORMATS, type ExportFormat } from './export-formats.js';
import { EXPORT_TASKS, type ExportTask } from './export-tasks.js';

const FORMATS = EXPORT_FORMATS as [ExportFormat, ...ExportFormat[]];
const TASKS = EXPORT_TASKS as [ExportTask, ...ExportTask[]];
const asText = (text: string): string => text;
const parquetFormats = EXPORT_FORMATS.filter((f) => EXPORT_FORMAT_SPECS[f].file === 'parquet');

/**
 * Every setting of `stepwise export`, declared once (as the label schema, src/label/settings.ts):
 * the flags of the command, their help with defaults, the messages of bad values (naming the
 * flag), `--config` replay, the settings hash of its run record and the docs/cli.md table are
 * derived from it. The task and format lists are the two tables' names, so a task or format added
 * there is a choice here with no other edit. The files (input, output, chat template), the policy
 * and where it is reached are not settings here: they are the command's own flags.
 */
export const EXPORT_SETTINGS = z.object({
  // The choices are checked by the schema, naming the flag and every choice (`--task must be one
  // of …`), and listed in the help text.
  task: setting(z.enum(TASKS), {
    help: `what to build: ${EXPORT_TASKS.join(', ')}`,
    arg: 'task',
    parse: asText,
    requirement: `one of ${EXPORT_TASKS.join(', ')}`,
  }),
  format: setting(z.enum(FORMATS).optional(), {
    help: `output format: ${EXPORT_FORMATS.join(', ')} (${parquetFormats.join(', ')} writes Parquet, the others JSONL; a format that does not match the --out extension is refused)`,
    arg: 'format',
    defaultText: `${parquetFormats.join(', ')} when --out ends in .parquet`,
    parse: asText,
    requirement: `one of ${EXPORT_FORMATS.join(', ')}`,
  }),
  signal: setting(z.string().min(1).optional(), {
    help: 'label signal to train on (e.g. rel-effective, rel-ratio, abs-q, sorm)',
    arg: 'signal',
    defaultText: 'sorm (else ms-hard or abs-q) for sorm and refine-local, else the first in the file',
    requirement: 'a signal name',
  }),
  seed: seedSetting('seed for down-sampling and pairing', { default: 0 }),
  maxPromptTokens: setting(z.number().int().min(1).default(2048), {
    help: 'judge-rl: drop prompts longer than this (estimated tokens)',
    arg: 'n',
  }),
  balance: setting(z.boolean().default(true), {
    help: 'judge-rl: down-sample the larger class to 50/50',
    negate: 'judge-rl: keep the natural class balance instead of down-sampling to 50/50',
    defaultText: 'on',
  }),
  promptKey: setting(z.string().min(1).optional(), {
    help: 'openrlhf: key of the prompt field (its --input_key)',
    arg: 'key',
    defaultText: 'input for judge-rl, prm and sorm, else prompt',
    requirement: 'a key name',
  }),
  labelKey: setting(z.string().min(1).optional(), {
    help: 'openrlhf: key of the label / target field (its --label_key)',
    arg: 'key',
    defaultText: 'label for judge-rl, prm and sorm, else response',
    requirement: 'a key name',
  }),
  dataSource: setting(z.string().min(1).optional(), {
    help: 'verl: data_source value',
    arg: 'name',
    defaultText: 'stepwise/<task>',
    requirement: 'a name',
  }),
  split: setting(z.string().min(1).default('train'), {
    help: 'verl: extra_info.split value',
    arg: 'name',
    requirement: 'a name',
  }),
  attempts: setting(z.number().int().min(1).default(16), {
    help: 'refine-local with --policy: continuations sampled per bad solution (one request with n)',
    arg: 'n',
  }),
  // The policy's budget, as every command that samples one (src/cli/vocabulary.ts DEFAULT_MAX_TOKENS).
  maxTokens: setting(z.number().int().min(1).default(2048), {
    help: 'refine-local with --policy: max tokens per continuation',
    arg: 'n',
  }),
});

export type ExportSettings = z.infer<typeof EXPORT_SETTINGS>;
