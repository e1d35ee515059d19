import type { Command } from 'commander';

/**
 * Every CLI command, one file each. To add one: create `./<name>.ts` exporting
 * `register(program: Command): void`, import it here and add it to the list.
 */
const commands: Array<(program: Command) => void> = [];

export function registerCommands(program: Command): void {
  for (const register of commands) register(program);
}
