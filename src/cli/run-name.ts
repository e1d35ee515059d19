import { type Command, InvalidArgumentError } from 'commander';
import { setRunName } from '../store/runs.js';
import { runNameOption } from './option-groups.js';

/**
 * `--name <name>` on every command that records a run (sample, label, search, select,
 * label-code, eval processbench, eval chunks, bench search, demo, export): a name of the user's choosing,
 * kept with the run in the store and shown by `stepwise runs` and the web view, so two runs of
 * the same command (chunk-reset vs plain sampling, two judges) can be told apart.
 */
export const RUN_COMMANDS: readonly string[] = [
  'sample',
  'label',
  'search',
  'select',
  'label-code',
  'eval processbench',
  'eval chunks',
  'bench search',
  'demo',
  'export',
];

/** Longest run name. */
export const MAX_RUN_NAME = 100;

/** A run name: printable, one line, at most {@link MAX_RUN_NAME} characters. */
export function parseRunName(value: string): string {
  const name = value.trim();
  if (name === '' || name.length > MAX_RUN_NAME || /[\p{Cc}\p{Cf}]/u.test(name))
    throw new InvalidArgumentError(
      `--name must be 1–${MAX_RUN_NAME} printable characters on one line (got ${JSON.stringify(value.slice(0, 120))})`,
    );
  return name;
}

/** The command's full name below the program (`eval chunks`). */
function pathOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Give a run-recording command its `--name` option. */
export function addRunNameOption(cmd: Command): void {
  if (!RUN_COMMANDS.includes(pathOf(cmd))) return;
  if (cmd.options.some((o) => o.long === '--name')) return;
  cmd.addOption(runNameOption(parseRunName));
}

/** Before a command runs: the runs it starts carry its `--name`. */
export function applyRunName(cmd: Command): void {
  const name = (cmd.opts() as { name?: unknown }).name;
  setRunName(RUN_COMMANDS.includes(pathOf(cmd)) && typeof name === 'string' ? name : undefined);
}
