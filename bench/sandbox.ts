/**
 * Code sandbox benchmark. Prints JSON:
 * - `humaneval`: time to run all 164 HumanEval canonical solutions against their tests (pool
 *   sized to the cores), and how many pass;
 * - `overhead`: sandbox cost of one run of a trivial program and test (`x = 1`, `assert x == 1`),
 *   one run at a time (latency: mean, median, p95; CPU time of this process and every process
 *   of the sandbox per run, which a loaded machine inflates far less than wall time) and with
 *   the full pool (throughput);
 * - `mbpp`: the same reference check for the 974 MBPP problems (not with `--skip-mbpp`);
 * - `mutation` (with `--mutation`): mutation labeling over all of MBPP (share of problems with a
 *   failing mutant, rows, equal step/label counts, time).
 *
 *   npx tsx bench/sandbox.ts [--runs N] [--skip-mbpp] [--mutation] [--mutants-per-problem K]
 *
 * Reads ../shared/data (or $STEPWISE_DATA). Numbers depend on the machine and its load (the
 * JSON includes the load average). To compare two versions of the sandbox (e.g. before and
 * after a change), run this same file against each checkout, alternating.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMutationLabelJob } from '../src/code/job.js';
import { loadHumanEval, loadMbpp } from '../src/data/index.js';
import { Sandbox } from '../src/verify/code/sandbox.js';
import { checkReferenceSolution } from '../src/verify/code/tasks.js';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

function dataPath(relative: string): string {
  const root = process.env.STEPWISE_DATA ?? new URL('../../shared/data', import.meta.url).pathname;
  return join(root, relative);
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const round = (x: number, digits = 1) => Number(x.toFixed(digits));

/** CPU ms used so far by this process and all its live descendants (with the children they reaped): Linux /proc. */
function treeCpuMs(): number {
  const tick = 10; // USER_HZ = 100 on Linux
  let total = 0;
  const visit = (pid: number) => {
    let children: string[] = [];
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime, stime, cutime, cstime are fields 14-17 (1-based), i.e. 11-14 after the name.
      if (pid !== process.pid) total += [11, 12, 13, 14].reduce((a, i) => a + Number(fields[i]) * tick, 0);
      children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean);
    } catch {
      return; // gone meanwhile
    }
    for (const c of children) visit(Number(c));
  };
  visit(process.pid);
  const own = process.cpuUsage();
  return total + (own.user + own.system) / 1000;
}

async function main(): Promise<void> {
  const runs = flag('--runs', 200);
  const limits = { timeoutMs: 20_000, programTimeoutMs: 20_000 };
  const pool = new Sandbox({ limits });
  const single = new Sandbox({ limits, concurrency: 1 });
  const enforcement = pool.enforcement();
  const loadBefore = loadavg()[0];

  // Start-up of the long-lived Python server (once per Sandbox).
  let t = performance.now();
  await pool.run({ program: 'x = 1', tests: [{ code: 'assert x == 1' }] });
  const serverStartMs = performance.now() - t;
  await single.run({ program: 'x = 1', tests: [{ code: 'assert x == 1' }] });

  const he = (await loadHumanEval({ path: dataPath('humaneval/HumanEval.jsonl') })).records;
  const heCpu = treeCpuMs();
  t = performance.now();
  const heChecks = await Promise.all(he.map((p) => checkReferenceSolution(p, { sandbox: pool })));
  const heMs = performance.now() - t;
  const heCpuMs = treeCpuMs() - heCpu;

  const trivial = { program: 'x = 1', tests: [{ code: 'assert x == 1' }] };
  const latencies: number[] = [];
  const cpuBefore = treeCpuMs();
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    await single.run(trivial);
    latencies.push(performance.now() - s);
  }
  const cpuPerRunMs = (treeCpuMs() - cpuBefore) / runs;
  latencies.sort((a, b) => a - b);
  t = performance.now();
  await Promise.all(Array.from({ length: runs }, () => pool.run(trivial)));
  const poolMs = performance.now() - t;

  const mbpp = (await loadMbpp({ path: dataPath('mbpp/mbpp.jsonl') })).records;
  let mbppReport: Record<string, unknown> | undefined;
  if (!process.argv.includes('--skip-mbpp')) {
    t = performance.now();
    const mbppChecks = await Promise.all(mbpp.map((p) => checkReferenceSolution(p, { sandbox: pool })));
    const mbppMs = performance.now() - t;
    const mbppFailing = mbppChecks.flatMap((c, i) =>
      c.correct ? [] : [{ id: mbpp[i].id, status: c.status }],
    );
    mbppReport = {
      problems: mbpp.length,
      passed: mbpp.length - mbppFailing.length,
      passRate: round((mbpp.length - mbppFailing.length) / mbpp.length, 4),
      failing: mbppFailing,
      totalMs: round(mbppMs),
    };
  }

  let mutation: Record<string, unknown> | undefined;
  if (process.argv.includes('--mutation')) {
    const dir = mkdtempSync(join(tmpdir(), 'stepwise-bench-mutation-'));
    try {
      const s = await runMutationLabelJob({
        problems: mbpp,
        out: join(dir, 'labels.jsonl'),
        mutantsPerProblem: flag('--mutants-per-problem', 3),
        limits: { timeoutMs: 5000, programTimeoutMs: 5000 },
        fresh: true,
      });
      mutation = {
        problems: s.problems,
        labeled: s.labeled,
        labeledShare: round(s.labeledShare, 4),
        rows: s.rows,
        mutantRows: s.mutantRows,
        referenceRows: s.referenceRows,
        equalLengths: s.equalLengths,
        positiveSteps: s.positiveSteps,
        negativeSteps: s.negativeSteps,
        mutantsTried: s.mutantsTried,
        mutantsFailing: s.mutantsFailing,
        mutantsSurviving: s.mutantsSurviving,
        failureStatuses: s.failureStatuses,
        mutationKinds: s.mutationKinds,
        skipped: s.skipped,
        seconds: round(s.wallSeconds),
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  pool.close();
  single.close();

  const mean = latencies.reduce((a, b) => a + b, 0) / latencies.length;
  process.stdout.write(
    `${JSON.stringify(
      {
        bench: 'sandbox',
        machine: {
          cores: availableParallelism(),
          loadAverage1mBefore: round(loadBefore, 2),
          loadAverage1mAfter: round(loadavg()[0], 2),
        },
        enforcement,
        pool: pool.concurrency,
        serverStartMs: round(serverStartMs),
        humaneval: {
          problems: he.length,
          passed: heChecks.filter((c) => c.correct).length,
          totalMs: round(heMs),
          perProblemMs: round(heMs / he.length, 2),
          cpuMs: round(heCpuMs),
        },
        overhead: {
          runs,
          meanMs: round(mean, 2),
          medianMs: round(quantile(latencies, 0.5), 2),
          p95Ms: round(quantile(latencies, 0.95), 2),
          cpuPerRunMs: round(cpuPerRunMs, 2),
          poolRunsPerSecond: round(runs / (poolMs / 1000)),
        },
        ...(mbppReport ? { mbpp: mbppReport } : {}),
        ...(mutation ? { mutation } : {}),
      },
      null,
      2,
    )}\n`,
  );
}

await main();
