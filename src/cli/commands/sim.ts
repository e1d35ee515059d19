import { closeSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../core/errors.js';
import { PROMPT_READERS } from '../../prompts/readers.js';
import {
  applySimQuery,
  DEFAULT_SIM_OPTIONS,
  exactStepValues,
  generateSimProblems,
  type SimOptions,
  sampleSimSolution,
  simProblemRows,
  simProcessBenchRows,
  startSimServer,
  validateSimOptions,
  wrongChunks,
} from '../../sim/index.js';
import { jsonOption, seedOption } from '../option-groups.js';
import { floatOption, intOption } from '../options.js';
import { reportJob, SIMULATED_WORLD, share } from '../summary.js';
import { TOKEN_HELP, tokenFromFlags } from '../token.js';

/**
 * `stepwise sim …`: the simulated reasoning world — serve it over HTTP, write data sets, show an
 * example. Everything it prints is simulated and says so.
 */

interface WorldFlags {
  seed?: number;
  minSteps?: number;
  maxSteps?: number;
  stepError?: number;
  sensitivity?: number;
  specificity?: number;
  options?: string;
}

function addWorldFlags(cmd: Command): Command {
  return cmd
    .addOption(seedOption('world seed (problem sets, unseeded requests, fault injection)'))
    .option(
      '--min-steps <n>',
      `fewest operations per problem (default ${DEFAULT_SIM_OPTIONS.minSteps})`,
      intOption('--min-steps', 1),
    )
    .option(
      '--max-steps <n>',
      `most operations per problem (default ${DEFAULT_SIM_OPTIONS.maxSteps})`,
      intOption('--max-steps', 1),
    )
    .option(
      '--step-error <p>',
      `policy base step-error rate (default ${DEFAULT_SIM_OPTIONS.stepError})`,
      floatOption('--step-error', 0, 1),
    )
    .option(
      '--sensitivity <p>',
      `judge P(Negative | chunk wrong) (default ${DEFAULT_SIM_OPTIONS.sensitivity})`,
      floatOption('--sensitivity', 0, 1),
    )
    .option(
      '--specificity <p>',
      `judge P(Positive | chunk right) (default ${DEFAULT_SIM_OPTIONS.specificity})`,
      floatOption('--specificity', 0, 1),
    )
    .option(
      '--options <query>',
      'any other world options as key=value&… (docs/sim.md), e.g. "check_rate=0.2&prm_noise=0.5"',
    );
}

/** World options from the flags: defaults, then --options, then the explicit flags. */
function worldOptions(o: WorldFlags): SimOptions {
  let out: SimOptions = { ...DEFAULT_SIM_OPTIONS };
  if (o.options) out = applySimQuery(out, o.options);
  const set = <K extends keyof SimOptions>(k: K, v: SimOptions[K] | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  set('seed', o.seed);
  set('minSteps', o.minSteps);
  set('maxSteps', o.maxSteps);
  set('stepError', o.stepError);
  set('sensitivity', o.sensitivity);
  set('specificity', o.specificity);
  return validateSimOptions(out);
}

function writeAtomically(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/**
 * Rows as JSONL, written a few thousand lines at a time: a million ProcessBench rows (~700 MB)
 * are more than one JavaScript string can hold.
 */
function writeJsonlAtomically(path: string, rows: readonly unknown[]): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w');
  try {
    for (let i = 0; i < rows.length; i += 4096)
      writeSync(
        fd,
        `${rows
          .slice(i, i + 4096)
          .map((r) => JSON.stringify(r))
          .join('\n')}\n`,
      );
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

export function register(program: Command): void {
  const sim = program
    .command('sim')
    .description(
      'The simulated reasoning world (arithmetic problems, a policy with exact step values, simulated judges): serve it, write data sets',
    );

  addWorldFlags(
    sim
      .command('serve')
      .description(
        'Serve the simulated world over HTTP: /v1/completions, /v1/chat/completions, /pooling, /v1/models, /metrics',
      )
      .option('--port <n>', 'port (0 = any free port)', intOption('--port', 0), 8000)
      .option(
        '--host <host>',
        'address to bind; anything but loopback requires a token (and TLS or a tunnel in front)',
        '127.0.0.1',
      )
      .option(
        '--token <token>',
        `require \`Authorization: Bearer <token>\` (the API key); ${TOKEN_HELP.token}`,
      )
      .option('--token-file <file>', TOKEN_HELP.tokenFile)
      .option('--latency-ms <ms>', 'delay before every answer', floatOption('--latency-ms', 0), 0)
      .option(
        '--fail-rate <p>',
        'share of model requests answered with HTTP 500',
        floatOption('--fail-rate', 0, 1),
        0,
      ),
  ).action(async (o) => {
    const options = worldOptions(o);
    const server = await startSimServer({
      ...options,
      readers: PROMPT_READERS,
      port: o.port,
      host: o.host,
      token: tokenFromFlags(o),
      latencyMs: o.latencyMs,
      failRate: o.failRate,
    });
    process.stdout.write(
      `${JSON.stringify({ simulated: true, url: server.url, baseURL: server.baseURL, port: server.port })}\n`,
    );
    process.stderr.write(
      `stepwise sim server (simulated world, not a real model) listening on ${server.baseURL} — metrics at ${server.url}/metrics\n`,
    );
    const stop = async () => {
      // Whatever it is doing (a request in flight, a judge that does not answer), the server
      // is gone within a second.
      setTimeout(() => process.exit(0), 1000).unref();
      await server.close();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

  addWorldFlags(
    sim
      .command('dataset')
      .addOption(jsonOption())
      .description(
        'Write sim problems (JSONL for `stepwise sample --dataset jsonl`) or ProcessBench-format solutions with true first-error labels',
      )
      .requiredOption(
        '--count <n>',
        'number of problems (or solutions with --processbench)',
        intOption('--count', 1),
      )
      .requiredOption(
        '--out <file>',
        'output file (--processbench: a .json file is a JSON array, anything else JSONL)',
      )
      .option(
        '--processbench',
        'write ProcessBench-format rows {id, generator, problem, steps, final_answer_correct, label}',
      )
      .option(
        '--error-share <p>',
        'with --processbench: aim for this share of rows with an error (default: the policy’s natural share)',
        floatOption('--error-share', 0, 1),
      ),
  ).action((o) => {
    const options = worldOptions(o);
    if (o.errorShare !== undefined && !o.processbench)
      throw new UsageError('--error-share only applies with --processbench');
    if (o.processbench) {
      const rows = simProcessBenchRows({ count: o.count, errorShare: o.errorShare }, options);
      if (/\.json$/i.test(o.out)) writeAtomically(o.out, `${JSON.stringify(rows, null, 1)}\n`);
      else writeJsonlAtomically(o.out, rows);
      const errors = rows.filter((r) => r.label >= 0).length;
      reportJob(
        {
          command: 'sim dataset',
          headline: `${rows.length} ProcessBench-format solutions`,
          world: SIMULATED_WORLD,
          lines: [
            ['with error', share(errors, rows.length)],
            ['seed', String(options.seed)],
          ],
          wrote: [o.out],
        },
        {
          simulated: true,
          kind: 'processbench',
          out: o.out,
          count: rows.length,
          withError: errors,
          errorShare: errors / rows.length,
          seed: options.seed,
        },
        o,
      );
      return;
    }
    const rows = simProblemRows(o.count, options);
    writeJsonlAtomically(o.out, rows);
    const mean = rows.reduce((s, r) => s + r.success_rate, 0) / rows.length;
    reportJob(
      {
        command: 'sim dataset',
        headline: `${rows.length} problems`,
        world: SIMULATED_WORLD,
        lines: [
          ['success rate', `${(100 * mean).toFixed(1)}% (mean exact success rate of the policy)`],
          ['seed', String(options.seed)],
        ],
        wrote: [o.out],
      },
      {
        simulated: true,
        kind: 'problems',
        out: o.out,
        count: rows.length,
        meanSuccessRate: mean,
        seed: options.seed,
      },
      o,
    );
  });

  addWorldFlags(
    sim
      .command('example')
      .description(
        'Print one sim problem with a sampled solution, each chunk’s exact value and whether it is wrong (JSON)',
      )
      .option('--index <i>', 'which problem of the seed', intOption('--index', 0), 0),
  ).action((o) => {
    const options = worldOptions(o);
    const problem = generateSimProblems({
      count: o.index + 1,
      seed: options.seed,
      minSteps: options.minSteps,
      maxSteps: options.maxSteps,
    })[o.index];
    const chunks = sampleSimSolution(problem, options, options.seed * 7919 + o.index);
    const values = exactStepValues(problem, chunks, options);
    const wrong = wrongChunks(problem, chunks);
    process.stdout.write(
      `${JSON.stringify(
        {
          simulated: true,
          question: problem.question,
          successRate: values[0],
          chunks: chunks.map((text, i) => ({ text, value: values[i + 1], wrong: wrong[i] })),
          firstWrong: wrong.indexOf(true),
        },
        null,
        2,
      )}\n`,
    );
  });
}
