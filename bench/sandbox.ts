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
 *   npx tsx bench/sandbox.ts --compare [REF] [--runs N]
 *
 * `--compare` measures before and after in one run: the sandbox of commit REF (default ea7ccab,
 * before bubblewrap and trusted verdicts; checked out in a temporary git worktree) and this
 * checkout's, alternating run by run: the trivial run one at a time (wall and CPU per run) and
 * all 164 HumanEval canonical solutions with a pool of the cores (wall and CPU), each timed
 * twice per side in ABBA order; prints JSON with the ratios after/before.
 *
 * Reads ../shared/data (or $STEPWISE_DATA). Numbers depend on the machine and its load (the
 * JSON includes the load average). To compare two versions of the sandbox (e.g. before and
 * after a change), run this same file against each checkout, alternating.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
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
  await pool.close();
  await single.close();

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

/** The sandbox module of another commit, checked out in a temporary worktree. */
async function sandboxAt(ref: string): Promise<{ Sandbox: typeof Sandbox; dir: string }> {
  const repo = new URL('..', import.meta.url).pathname;
  const dir = mkdtempSync(join(tmpdir(), 'stepwise-bench-before-'));
  const git = (args: string[]) => execFileSync('git', ['-C', repo, ...args], { stdio: 'pipe' });
  git(['worktree', 'add', '--detach', dir, ref]);
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  const module = (await import(pathToFileURL(join(dir, 'src/verify/code/sandbox.ts')).href)) as {
    Sandbox: typeof Sandbox;
  };
  return { Sandbox: module.Sandbox, dir };
}

async function compare(): Promise<void> {
  const at = process.argv.indexOf('--compare');
  const ref =
    process.argv[at + 1] && !process.argv[at + 1].startsWith('--') ? process.argv[at + 1] : 'ea7ccab';
  const runs = flag('--runs', 40);
  const limits = { timeoutMs: 20_000, programTimeoutMs: 20_000 };
  const before = await sandboxAt(ref);
  const repo = new URL('..', import.meta.url).pathname;
  try {
    const loadBefore = loadavg()[0];
    const sides = {
      before: {
        single: new before.Sandbox({ limits, concurrency: 1 }),
        pool: new before.Sandbox({ limits }),
      },
      after: { single: new Sandbox({ limits, concurrency: 1 }), pool: new Sandbox({ limits }) },
    };
    const trivial = { program: 'x = 1', tests: [{ code: 'assert x == 1' }] };
    for (const side of Object.values(sides)) {
      await side.single.run(trivial);
      await side.pool.run(trivial);
    }
    const he = (await loadHumanEval({ path: dataPath('humaneval/HumanEval.jsonl') })).records;
    const stats = {
      before: {
        latencies: [] as number[],
        cpuMs: 0,
        heMs: [] as number[],
        heCpuMs: [] as number[],
        hePassed: 0,
      },
      after: {
        latencies: [] as number[],
        cpuMs: 0,
        heMs: [] as number[],
        heCpuMs: [] as number[],
        hePassed: 0,
      },
    };
    for (let i = 0; i < runs; i++)
      for (const name of i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
        const cpu = treeCpuMs();
        const s = performance.now();
        await sides[name].single.run(trivial);
        stats[name].latencies.push(performance.now() - s);
        stats[name].cpuMs += treeCpuMs() - cpu;
      }
    for (const name of ['before', 'after', 'after', 'before'] as const) {
      const cpu = treeCpuMs();
      const s = performance.now();
      const checks = await Promise.all(
        he.map((p) => checkReferenceSolution(p, { sandbox: sides[name].pool })),
      );
      stats[name].heMs.push(performance.now() - s);
      stats[name].heCpuMs.push(treeCpuMs() - cpu);
      stats[name].hePassed = checks.filter((c) => c.correct).length;
    }
    const enforcement = { before: sides.before.pool.enforcement(), after: sides.after.pool.enforcement() };
    for (const side of Object.values(sides)) {
      await side.single.close();
      await side.pool.close();
    }
    const summary = (name: 'before' | 'after') => {
      const st = stats[name];
      const sorted = [...st.latencies].sort((a, b) => a - b);
      return {
        overheadMedianMs: round(quantile(sorted, 0.5), 2),
        overheadMeanMs: round(sorted.reduce((a, b) => a + b, 0) / sorted.length, 2),
        overheadP95Ms: round(quantile(sorted, 0.95), 2),
        overheadCpuPerRunMs: round(st.cpuMs / runs, 2),
        humanevalMs: st.heMs.map((x) => round(x)),
        humanevalCpuMs: st.heCpuMs.map((x) => round(x)),
        humanevalPassed: st.hePassed,
      };
    };
    const b = summary('before');
    const a = summary('after');
    const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
    process.stdout.write(
      `${JSON.stringify(
        {
          bench: 'sandbox --compare',
          before: { ref, ...b, isolation: enforcement.before },
          after: {
            ref: execFileSync('git', ['-C', repo, 'rev-parse', '--short', 'HEAD']).toString().trim(),
            ...a,
            isolation: enforcement.after,
          },
          ratio: {
            overheadMedian: round(a.overheadMedianMs / b.overheadMedianMs, 2),
            overheadCpuPerRun: round(a.overheadCpuPerRunMs / b.overheadCpuPerRunMs, 2),
            humanevalWall: round(mean(a.humanevalMs) / mean(b.humanevalMs), 2),
            humanevalCpu: round(mean(a.humanevalCpuMs) / mean(b.humanevalCpuMs), 2),
          },
          runs,
          machine: {
            cores: availableParallelism(),
            loadAverage1mBefore: round(loadBefore, 2),
            loadAverage1mAfter: round(loadavg()[0], 2),
          },
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    execFileSync('git', ['-C', repo, 'worktree', 'remove', '--force', before.dir], { stdio: 'pipe' });
  }
}

if (process.argv.includes('--compare')) await compare();
else await main();
