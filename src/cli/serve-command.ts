import type { Command } from 'commander';

/**
 * `stepwise serve …`: long-running services. `serve rewards` is the OpenRLHF/verl reward service;
 * the web view (`stepwise serve` itself) registers its action on the same command.
 */
export function serveCommand(program: Command): Command {
  const existing = program.commands.find((c) => c.name() === 'serve');
  return (
    existing ??
    program
      .command('serve')
      .description('Run a stepwise server: the web view and JSON API, or `serve rewards` for RL trainers')
  );
}
