import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { closeDefaultSandbox, configureSandboxDefaults } from '../verify/code/sandbox.js';

export const UNSAFE_FILESYSTEM_HELP =
  'run model-written code even where bubblewrap (bwrap) is missing or does not work (it could then read, delete or overwrite your files)';

/** `--unsafe-filesystem` on every command that can run model-written code. */
export function addUnsafeFilesystemOption(cmd: Command): Command {
  return cmd.option('--unsafe-filesystem', UNSAFE_FILESYSTEM_HELP);
}

/**
 * Before any command runs: the code sandbox takes `--unsafe-filesystem` from its flags, and hides
 * the folders of its outputs and store from candidates (besides the defaults: homes, the working
 * directory, `$STEPWISE_HOME`, the temporary folder).
 */
export function applySandboxFlags(cmd: Command): void {
  const flags = cmd.opts() as Record<string, unknown>;
  const files = ['out', 'store', 'batchOut']
    .map((k) => flags[k])
    .filter((v): v is string => typeof v === 'string');
  configureSandboxDefaults({
    unsafeFilesystem: flags.unsafeFilesystem === true,
    hide: files.map((f) => dirname(resolve(f))),
  });
}

/** After a command: stop the shared sandbox's server, which removes its runs' folders and cgroups first. */
export async function closeSandboxes(): Promise<void> {
  await closeDefaultSandbox();
}
