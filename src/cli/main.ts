import { Command, CommanderError, Help, type Option } from 'commander';
import { StepwiseError } from '../core/errors.js';
import { redactText, secretValues } from '../core/redact.js';
import { VERSION } from '../version.js';
import { registerCommands } from './commands/index.js';
import { onInterrupt } from './job-harness.js';
import { addRunNameOption, applyRunName } from './run-name.js';
import { applySandboxFlags, closeSandboxes } from './sandbox.js';

const defaultHelp = new Help();

/** Build the `stepwise` program. Each command lives in `./commands/<name>.ts` and registers itself there. */
export function buildProgram(): Command {
  const program = new Command('stepwise')
    .description('Step-level supervision of LLM reasoning: segment, label, judge, search, evaluate, export.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .enablePositionalOptions()
    .exitOverride()
    // Subcommands inherit this: a required option says so in --help.
    .configureHelp({
      optionDescription(option: Option): string {
        const base = defaultHelp.optionDescription(option);
        return option.mandatory && !base.includes('(required)') ? `${base} (required)` : base;
      },
    })
    .hook('preAction', (_program, action) => {
      applySandboxFlags(action);
      applyRunName(action);
    })
    // The code sandbox's server removes its spare runs' folders and cgroups before the job ends.
    .hook('postAction', () => closeSandboxes());
  registerCommands(program);
  forEachCommand(program, addRunNameOption);
  forEachCommand(program, reportUnknownOptionsFirst);
  return program;
}

function forEachCommand(cmd: Command, f: (c: Command) => void): void {
  f(cmd);
  for (const sub of cmd.commands) forEachCommand(sub, f);
}

/**
 * Commander checks required options before unknown ones, so a typo (`--model` for `--policy`)
 * is reported as a missing `--policy`. Say what is wrong first: the option it does not know.
 */
function reportUnknownOptionsFirst(cmd: Command): void {
  // Both methods are commander's own (untyped in its declarations); we only reorder the checks.
  const c = cmd as Command & {
    missingMandatoryOptionValue(option: Option): never;
    unknownOption(flag: string): never;
  };
  let unknown: string[] = [];
  const parseOptions = c.parseOptions.bind(c);
  c.parseOptions = (argv: string[]) => {
    const parsed = parseOptions(argv);
    unknown = parsed.unknown;
    return parsed;
  };
  const missing = c.missingMandatoryOptionValue.bind(c);
  c.missingMandatoryOptionValue = (option: Option): never => {
    if (c.commands.length === 0 && unknown[0]?.startsWith('-')) c.unknownOption(unknown[0]);
    return missing(option);
  };
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
  // Ctrl-C: the job harness gives the terminal back and says how to resume.
  process.on('SIGINT', onInterrupt);
  keepSecretsOffStderr(argv);
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    process.exitCode = exitCodeFor(err);
  }
}

/**
 * Everything written to stderr (messages, warnings, progress, summaries) passes through
 * core/redact: the API key given on the command line or in OPENAI_API_KEY, and credentials in
 * a server URL, never reach a terminal log or a CI transcript.
 */
function keepSecretsOffStderr(argv: readonly string[]): void {
  const literals = secretValues(argv, process.env);
  const write = process.stderr.write.bind(process.stderr) as (...a: unknown[]) => boolean;
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) =>
    write(
      typeof chunk === 'string' ? redactText(chunk, literals) : chunk,
      ...rest,
    )) as typeof process.stderr.write;
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
