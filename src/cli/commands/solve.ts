import type { Command } from 'commander';
import { Option } from 'commander';
import { totalTokens } from '../../core/cost.js';
import type { Problem } from '../../core/types.js';
import { runStrategy, STRATEGY_NAMES } from '../../search/registry.js';
import type { SearchResult } from '../../search/types.js';
import { parseSimQuestion, solveSimProblem } from '../../sim/world.js';
import { jsonOption } from '../option-groups.js';
import {
  addModelOptions,
  addStrategyOptions,
  buildSearchDeps,
  definedFields,
  isSimSpec,
  type SearchFlags,
  strategyConfig,
} from '../search-setup.js';
import { addSimGuessOption, assertSimWorldInputs } from '../sim-guard.js';

interface SolveFlags extends SearchFlags {
  strategy: string;
  answer?: string;
  json?: boolean;
  simGuess?: boolean;
}

const MARK: Record<string, string> = { positive: '+', negative: '-', neutral: '~' };

/** The human-readable report of one search: every chunk with its verdict and attempts, then answer and cost. */
export function formatSolveReport(result: SearchResult, options: { simulated?: boolean } = {}): string {
  const lines: string[] = [];
  if (options.simulated) lines.push('[SIMULATED world: not a real model result]', '');
  if (result.judgeUsedGold)
    lines.push('[The judge read the gold answer (--allow-gold-judge): not a test of search]', '');
  lines.push(`strategy: ${result.strategy}`, '');
  for (const c of result.chunks) {
    const verdict = c.verdict
      ? `${MARK[c.verdict] ?? '?'} ${c.verdict}${c.score !== undefined ? ` ${c.score.toFixed(2)}` : ''}`
      : 'not judged';
    lines.push(`[chunk ${c.index}] ${verdict} · ${c.attempts} attempt${c.attempts === 1 ? '' : 's'}`);
    lines.push(...c.text.split('\n').map((l) => `    ${l}`));
  }
  lines.push('');
  const rejected = result.trace.filter((t) => t.status === 'rejected').length;
  const extras = Object.entries(result.stats)
    .map(([k, v]) => `${k} ${typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(3) : v}`)
    .join(', ');
  lines.push(
    `answer: ${result.answer ?? '(none)'}${result.correct === undefined ? '' : result.correct ? '  (correct)' : '  (wrong)'}`,
  );
  lines.push(
    `attempts: ${result.trace.length} (${rejected} rejected), backtracks: ${result.backtracks.length}${extras ? `; ${extras}` : ''}`,
  );
  const p = result.cost.policy;
  const j = result.cost.judge;
  lines.push(
    `cost: policy ${p.calls} calls, ${totalTokens(result.cost, 'policy')} tokens (${p.promptTokens} prompt + ${p.completionTokens} completion); ` +
      `judge ${j.calls} calls, ${totalTokens(result.cost, 'judge')} tokens (${j.promptTokens} prompt + ${j.completionTokens} completion)`,
  );
  return `${lines.join('\n')}\n`;
}

/** `stepwise solve`: one problem, one strategy; the solution with every chunk's verdict and attempts. */
export function register(program: Command): void {
  const cmd = program
    .command('solve')
    .description('Solve one problem with a search strategy; print each chunk with its verdict and attempts')
    .argument(
      '<problem>',
      'the problem text (for sim policies a sim question, e.g. from `stepwise sim example`)',
    );
  addModelOptions(cmd);
  addSimGuessOption(cmd);
  cmd.addOption(
    new Option('--strategy <name>', 'search strategy')
      .choices(STRATEGY_NAMES as string[])
      .default('chunk-reset'),
  );
  addStrategyOptions(cmd);
  cmd
    .option(
      '--answer <gold>',
      'gold answer: the final answer is checked against it (sim questions: computed)',
    )
    .addOption(jsonOption('print the whole result (chunks, trace, backtracks, cost) as JSON'))
    .action(async (question: string, f: SolveFlags) => {
      assertSimWorldInputs({ policy: f.policy, judge: f.judge, outcome: f.outcome }, [{ question }], {
        guess: f.simGuess,
      });
      const { deps, close, simulated: simulatedModels } = await buildSearchDeps(f, [f.strategy]);
      // A sim question carries its own gold answer; the world can compute it.
      const sim = parseSimQuestion(question);
      const gold = f.answer ?? (sim ? String(solveSimProblem(sim)) : '');
      const problem: Problem = {
        id: 'cli',
        question,
        answer: gold,
        domain: 'math',
        source: sim ? 'sim' : 'cli',
      };
      const simulated = simulatedModels || isSimSpec(f.policy) || isSimSpec(f.judge) || isSimSpec(f.outcome);
      try {
        const result = await runStrategy(f.strategy, problem, definedFields(strategyConfig(f)), deps);
        if (f.json)
          process.stdout.write(
            `${JSON.stringify({ ...(simulated ? { simulated: true } : {}), ...result }, null, 2)}\n`,
          );
        else process.stdout.write(formatSolveReport(result, { simulated }));
      } finally {
        await close();
      }
    });
}
