import { type Command, Option } from 'commander';
import { UsageError } from '../../core/errors.js';
import {
  type EquivalenceOptions,
  explainEquivalence,
  loadEquivalenceCases,
  scoreEquivalenceCases,
} from '../../verify/index.js';
import { jsonOption, quietOption } from '../option-groups.js';
import { createProgressBar } from '../progress.js';
import { addAlias } from '../vocabulary.js';

interface VerifyFlags {
  json?: boolean;
  cases?: string;
  percent?: 'flexible' | 'strict';
  listOrder?: 'unordered' | 'ordered';
  tolerance?: string;
  timeoutMs?: string;
  failures?: string;
  quiet?: boolean;
}

function equivalenceOptions(flags: VerifyFlags): EquivalenceOptions {
  const options: EquivalenceOptions = { percent: flags.percent, listOrder: flags.listOrder };
  if (flags.tolerance !== undefined) {
    const t = Number(flags.tolerance);
    if (!Number.isFinite(t) || t < 0)
      throw new UsageError(`--tolerance must be a number >= 0, not "${flags.tolerance}"`);
    options.floatTolerance = t;
  }
  if (flags.timeoutMs !== undefined) {
    const t = Number(flags.timeoutMs);
    if (!Number.isFinite(t) || t <= 0)
      throw new UsageError(`--timeout-ms must be a positive number of ms, not "${flags.timeoutMs}"`);
    options.timeoutMs = t;
  }
  return options;
}

/** `stepwise verify`: compare two math answers, or score the checker on a labelled case file. */
export function register(program: Command): void {
  const cmd = program
    .command('verify')
    .description('Check whether two math answers are equivalent (or score a labelled case file)')
    .argument('[gold]', 'reference answer (LaTeX or plain text)')
    .argument('[pred]', 'predicted answer to compare with the reference')
    .addOption(jsonOption('print a JSON object instead of "equal" / "not equal"'))
    .option(
      '--cases <file>',
      'JSONL case file (gold, pred, equal[, kind, extract_side]) to score; prints agreement',
    )
    .addOption(
      new Option('--percent <policy>', 'how a percent sign on one side is read').choices([
        'flexible',
        'strict',
      ]),
    )
    .addOption(
      new Option('--list-order <policy>', 'whether bare lists of answers must match in order').choices([
        'unordered',
        'ordered',
      ]),
    )
    .option('--tolerance <rel>', 'relative tolerance for numbers (default 1e-6)')
    .option('--timeout-ms <ms>', 'time cap per comparison in milliseconds (default 1000)')
    .option('--failures <n>', 'with --cases: how many disagreements to list (default 10)')
    .addOption(quietOption('no progress bar'))
    .addHelpText(
      'after',
      `
Examples:
  stepwise verify '\\frac{1}{2}' '0.5'          # equal
  stepwise verify 3 4 --json                   # {"equal":false,"method":"number",...}
  stepwise verify --cases ../shared/eval/answer-equiv/answer_equiv_cases.jsonl --json
Exit code is 0 whatever the verdict; see docs/verify.md for the normalisation rules and policies.`,
    )
    .action((gold: string | undefined, pred: string | undefined, flags: VerifyFlags) => {
      const options = equivalenceOptions(flags);
      if (flags.cases !== undefined) {
        if (gold !== undefined) throw new UsageError('give either <gold> <pred> or --cases FILE, not both');
        const cases = loadEquivalenceCases(flags.cases);
        const bar = createProgressBar('verify', { quiet: flags.quiet || cases.length < 200 });
        const report = scoreEquivalenceCases(cases, options, (done, total) => {
          if (done % 50 === 0 || done === total) bar.update(done, total);
        });
        bar.stop();
        const limit = flags.failures === undefined ? 10 : Number(flags.failures);
        if (!Number.isInteger(limit) || limit < 0) throw new UsageError(`--failures must be an integer >= 0`);
        if (flags.json) {
          process.stdout.write(
            `${JSON.stringify({ ...report, disagreements: report.disagreements.slice(0, limit) })}\n`,
          );
          return;
        }
        for (const d of report.disagreements.slice(0, limit)) {
          process.stdout.write(
            `disagree ${d.id} (${d.kind}): expected ${d.expected ? 'equal' : 'not equal'}\n`,
          );
        }
        process.stdout.write(
          `false positives ${report.falsePositives}, false negatives ${report.falseNegatives}, ` +
            `${report.comparisonsPerSecond} comparisons/s\n${report.agree} agree of ${report.total}\n`,
        );
        return;
      }
      if (gold === undefined || pred === undefined) {
        throw new UsageError('verify needs <gold> and <pred>, or --cases FILE (see stepwise verify --help)');
      }
      const verdict = explainEquivalence(gold, pred, options);
      if (flags.json) process.stdout.write(`${JSON.stringify(verdict)}\n`);
      else process.stdout.write(`${verdict.equal ? 'equal' : 'not equal'}\n`);
    });
  addAlias(cmd, '--timeout-ms', '--timeout');
}
