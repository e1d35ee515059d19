import { Command, CommanderError } from 'commander';
import { StepwiseError } from '../core/errors.js';
import { VERSION } from '../version.js';
import { registerCommands } from './commands/index.js';

/** Build the `stepwise` program. Each command lives in `./commands/<name>.ts` and registers itself there. */
export function buildProgram(): Command {
  const program = new Command('stepwise')
    .description('Step-level supervision of LLM reasoning: segment, label, judge, search, evaluate, export.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .enablePositionalOptions()
    .exitOverride();
  registerCommands(program);
  return program;
}

/** Run the CLI: user errors print their message (no stack trace) and exit with their code. */
export async function main(argv: string[] = process.argv): Promise<void> {
  // `stepwise … | head` closes the pipe early: that is the reader's choice, not an error.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw e;
    });
  }
  // Ctrl-C: jobs append each finished record at once, so stopping loses only work in flight.
  // Commands with their own graceful handler (e.g. `sample`) take over; otherwise say how to resume.
  const onInterrupt = (): void => {
    if (process.listenerCount('SIGINT') > 1) return;
    process.stderr.write(
      '\nstepwise: interrupted; finished work is kept: rerun the same command to resume\n',
    );
    process.exit(130);
  };
  process.on('SIGINT', onInterrupt);
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    process.exitCode = exitCodeFor(err);
  }
}

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) {
    // Help and version exit 0; usage errors (already printed by commander) exit 2.
    return err.exitCode === 0 ? 0 : 2;
  }
  if (err instanceof StepwiseError) {
    process.stderr.write(`stepwise: ${err.message}\n`);
    return err.exitCode;
  }
  const e = err as Error;
  process.stderr.write(`stepwise: unexpected error: ${e?.message ?? String(err)}\n`);
  if (process.env.STEPWISE_DEBUG) process.stderr.write(`${e?.stack}\n`);
  return 1;
}
