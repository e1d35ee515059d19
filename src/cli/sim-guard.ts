import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import { lookupSimQuestion } from '../sim/world.js';

/** True when a model or judge spec names the simulated world (in process, or `openai:sim…` served by `stepwise sim serve`). */
export function isSimSpec(spec: string | undefined): boolean {
  if (!spec) return false;
  if (spec.startsWith('sim')) return true;
  const colon = spec.indexOf(':');
  return colon > 0 && spec.slice(colon + 1).startsWith('sim');
}

/** The `--sim-guess` flag: let a simulated model answer questions it does not know (a seeded guess). */
export function addSimGuessOption(cmd: Command): Command {
  return cmd.option(
    '--sim-guess',
    "let a simulated policy or judge answer inputs that are not the simulated world's problems (its answers are then seeded guesses)",
  );
}

/**
 * The simulated world answers only its own problems (`--dataset sim`, `stepwise sim example`):
 * on any other question it can only guess, and a report built on guesses looks like a result.
 * Refuse (exit 2) when a sim model meets such an input, unless `guess`.
 */
export function assertSimWorldInputs(
  models: Record<string, string | undefined>,
  inputs: Iterable<{ id?: string; question: string }>,
  options: { guess?: boolean; source?: string } = {},
): void {
  const check = simWorldInputCheck(models, options);
  if (check) for (const input of inputs) check(input);
}

/**
 * {@link assertSimWorldInputs} one input at a time (for inputs read as a job goes): the check to
 * run on each, or undefined when there is nothing to check.
 */
export function simWorldInputCheck(
  models: Record<string, string | undefined>,
  options: { guess?: boolean; source?: string } = {},
): ((input: { id?: string; question: string }) => void) | undefined {
  if (options.guess) return undefined;
  const sim = Object.entries(models).filter(([, spec]) => isSimSpec(spec));
  if (sim.length === 0) return undefined;
  return (input) => {
    if (lookupSimQuestion(input.question)) return;
    const who = sim.map(([flag, spec]) => `--${flag} ${spec}`).join(', ');
    const shown = input.question.length > 80 ? `${input.question.slice(0, 77)}…` : input.question;
    const where = [options.source, input.id === undefined ? undefined : `problem ${input.id}`]
      .filter(Boolean)
      .join(', ');
    throw new UsageError(
      `${who} ${sim.length > 1 ? 'are' : 'is'} simulated: ${sim.length > 1 ? 'they answer' : 'it answers'} only the simulated world's problems (the sim dataset: --dataset sim, ` +
        `or a question from \`stepwise sim example\`), and ${where ? `${where}, ` : ''}"${shown}" is not one of them. ` +
        'Use --dataset sim or a real model, or pass --sim-guess to let it guess anyway.',
    );
  };
}
